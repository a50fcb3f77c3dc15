"""The plan's data: the measure families and their categories, the settings (the marts' estimator, read from the
build's vars, and the plan's own assumptions), and the cells with their strata (docs/CORRECTION.md, "lfh
audit-plan")."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from lfh.categories import all_models_label, level_of, occupation_genders
from lfh.errors import LfhError

FAMILIES = ("gender", "couple", "occupation")
DEFAULT_FAMILIES = ("gender", "couple")
Stratum = tuple[str, ...]  # model, domain, prompt_condition[, machine_class]
# The sampling strata (`strata` of read_units): model x domain x prompt condition (audit-sample's, the marts'), or the
# same split by what the machine labels say about the story (machine_label_class; docs/CORRECTION.md, "Strata on the
# machine labels"): known for every story before anyone hand-labels it, so a design may sample the classes at
# different rates, provided the estimator weights each by its size (stratified PPI).
STRATA = ("model_domain_condition", "machine_label_class")
# A story's machine-label class: 'gendered' when the labeler gives every character of the story female or male,
# 'uncertain' otherwise (a character it calls non-binary, unspecified or unsure, or none). On the dev audit (gender
# rule study) 18 of 817 characters of gendered stories are mislabeled, 326 of 924 of the others: the residual y - f
# lives in the uncertain class, which is where Neyman's allocation sends the hand labels.
MACHINE_CLASSES = ("gendered", "uncertain")  # story_class of int_correction_units_counted, which computes it
NO_VALUE_VARIANCE = 0.25  # a cell without a corrected value counts as a share whose standard error is 0.5
NO_VALUE_HALF_WIDTH = 0.5  # ... and, judged by half-widths, as the whole of [0, 1]
OBJECTIVES = ("half_width", "variance")


class AuditPlanError(LfhError):
    """The warehouse cannot give a plan (not built, no labeled story), or the request cannot be met."""


MACHINE_MEANS = ("unlabeled", "all_units")


@dataclass(frozen=True)
class PlanSettings:
    """The marts' estimator (the dbt vars the warehouse was built with: `read_plan` reads them) and the plan's own
    assumptions."""

    z: float = 1.96
    cell_min_hand_labeled: int = 20     # var ppi_cell_min_hand_labeled
    min_hand_labeled: int = 20          # var ppi_min_hand_labeled
    assumed_error_rate: float = 0.10    # default labeler error when the family has no hand label
    prior_units: float = 10.0           # pseudo-units of the confusion-matrix prior in each residual moment
    lam: float = 1.0                    # var ppi_lambda
    machine_mean: str = "unlabeled"     # var ppi_machine_mean: the f mean over the unlabeled units or all units
    cell_pool_rule: str = "switch"      # var ppi_cell_pool_rule: own from cell_min_hand_labeled on, or composite
    tau2_z: float = 1.2816              # var ppi_composite_tau2_z: the composite's upper confidence value of tau^2
    # what an allocation minimises over the selected cells: the summed predicted half-width (what a reader of the
    # intervals, and the validation, judges: the mean width) or the summed variance (Neyman's objective, which
    # the cells of largest variance dominate)
    objective: str = "half_width"
    # the vars that name the cells: the all-models rows' model, the occupation denominator's genders
    all_models_label: str = field(default_factory=all_models_label)             # var all_models_label
    occupation_genders: tuple[str, ...] = field(default_factory=occupation_genders)  # var occupation_gender_codes

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise AuditPlanError(
                f"unknown allocation objective {self.objective!r}: choose from {', '.join(OBJECTIVES)}")

    @classmethod
    def from_vars(cls, dbt_vars: dict, **overrides: object) -> PlanSettings:
        """The settings of a build with these dbt vars (missing ones: the defaults above)."""
        names = {"wilson_z": "z", "ppi_cell_min_hand_labeled": "cell_min_hand_labeled",
                 "ppi_min_hand_labeled": "min_hand_labeled", "ppi_lambda": "lam", "ppi_machine_mean": "machine_mean",
                 "ppi_cell_pool_rule": "cell_pool_rule", "ppi_composite_tau2_z": "tau2_z",
                 "all_models_label": "all_models_label", "occupation_gender_codes": "occupation_genders"}
        values = {field: dbt_vars[name] for name, field in names.items() if dbt_vars.get(name) is not None}
        if "occupation_genders" in values:
            values["occupation_genders"] = tuple(values["occupation_genders"])
        return cls(**{**values, **overrides})


Moments = tuple[float, float, float, float]  # (aa, ab, ba, bb): Cov(x_a, z_a), Cov(x_a, z_b), Cov(x_b, z_a), ...
NO_MOMENTS: Moments = (0.0, 0.0, 0.0, 0.0)


def linearised(moments: Moments, share: float) -> float:
    """Cov(x_a - r x_b, z_a - r z_b) from the moments of (x_a, x_b) and (z_a, z_b): the share's linearised outcome."""
    aa, ab, ba, bb = moments
    return aa - share * (ab + ba) + share * share * bb


@dataclass
class StratumPart:
    """The units of one cell inside one stratum; d = y - lam f. `machine`: population moments of the unlabeled units
    (as the marts compute them; thousands of units). The hand-labeled units' moments (residual, residual_machine,
    labeled_machine) are the stratum's (co)variances, unbiased (the pilot's made so by unbiased, then shrunk):
    _residual_factor turns them into what the marts compute at a given count."""

    stratum: Stratum
    units: int                # T_h
    per_story: float          # units per story of the stratum (a story gives 0, 1 or 2 units to a cell)
    machine: Moments          # of (f_a, f_b) over the stratum's units without a hand label (all, where none)
    residual: Moments         # of (d_a, d_b): the pilot's, shrunk to the confusion-matrix value
    pilot_units: int          # hand-labeled units now
    residual_machine: Moments = NO_MOMENTS   # Cov(d, f) over hand-labeled units, shrunk alike
    labeled_machine: Moments | None = None   # of (f_a, f_b) over hand-labeled units (None: `machine`)
    residual_mean: tuple[float, float] = (0.0, 0.0)  # mean of (d_a, d_b): the labeler's error, shrunk alike

    def labeled_variance(self, share: float, scale: float, lam: float) -> float:
        """Var(u(y) - lam scale u(f)) = Var(u(d) + lam (1 - scale) u(f)) on a hand-labeled unit, u = x_a - r x_b:
        the rectifier's variance when this stratum's f enters it scaled by `scale` (1: docs/METHOD.md §9; c_h: the f
        mean over all units, macros/stats/ppi_machine_mean.sql)."""
        shift = lam * (1.0 - scale)
        labeled = self.labeled_machine if self.labeled_machine is not None else self.machine
        return (linearised(self.residual, share) + 2 * shift * linearised(self.residual_machine, share)
                + shift * shift * linearised(labeled, share))


@dataclass
class PlanCell:
    family: str
    model: str
    key: tuple[str, ...]      # the cell keys besides model: (domain, condition, gender), (couple_type,), ...
    share: float              # r: the share the plan linearises at
    known: float              # b: the mean of the denominator indicator
    parts: list[StratumPart]
    pool: PlanCell | None = None  # the all-models cell of the same key: the pooled rectifier of a per-model cell
    # lfh.categories.LEVELS: the all-models cell's, or a model's (empty: from `model` and the project's var
    # all_models_label)
    level: str = ""
    linear: dict[int, tuple[float, float, float, float]] = field(default_factory=dict, repr=False, compare=False)
    # the composite's row of each pool model at given hand labels of its strata, and its between-model spread at the
    # pilot's: the allocation asks for them again and again
    model_rows: dict[tuple, tuple | None] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.level:
            self.level = level_of(self.model)

    @property
    def name(self) -> str:
        return "/".join((self.family, self.model, *self.key))

    def linearised_part(self, part: StratumPart) -> tuple[float, float, float, float]:
        """A stratum's moments linearised at this cell's share (machine, residual, residual x machine, labeled
        machine), computed once: the allocation asks for them hundreds of thousands of times."""
        values = self.linear.get(id(part))
        if values is None:
            labeled = part.labeled_machine if part.labeled_machine is not None else part.machine
            values = tuple(linearised(moments, self.share) for moments in (
                part.machine, part.residual, part.residual_machine, labeled))
            self.linear[id(part)] = values
        return values


@dataclass
class StratumStories:
    stories: int              # labeled stories
    hand_labeled: int         # of them, with a hand label
    candidates: int           # without one: what audit-sample can still draw


@dataclass
class Plan:
    cells: list[PlanCell]
    strata: dict[Stratum, StratumStories]
    settings: PlanSettings
    pilot_units: int
    cells_by_stratum: dict[Stratum, list[PlanCell]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        index: dict[Stratum, list[PlanCell]] = defaultdict(list)
        for cell in self.cells:
            touched = {part.stratum for part in cell.parts}
            if cell.pool is not None:
                touched |= {part.stratum for part in cell.pool.parts}
            for stratum in touched:
                index[stratum].append(cell)
        self.cells_by_stratum = dict(index)

    def labeled_now(self) -> dict[Stratum, float]:
        return {stratum: float(info.hand_labeled) for stratum, info in self.strata.items()}
