"""The corrected cells an allocation serves: `--measure`, `--level`, `--category`, `--domain`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from lfh.audit.plan.model import DEFAULT_FAMILIES, FAMILIES, AuditPlanError, PlanCell
from lfh.categories import COUPLE_TYPES, GENDERS, LEVELS, all_models_label, level_of, occupation_genders

DOMAINS = ("learning", "labor", "love")


@dataclass(frozen=True)
class Selection:
    """The corrected cells an allocation serves (the issue: "the summed variance of the corrected shares the user
    selects"): measure families, levels (the all-model cells, the per-model cells), categories (a gender, e.g.
    nonbinary, or a couple type; a gender also selects the couple types with a partner of it) and domains (gender
    cells of that domain; couples are love stories; occupations labor). Empty categories / domains: all."""

    families: tuple[str, ...] = DEFAULT_FAMILIES
    levels: tuple[str, ...] = LEVELS
    categories: tuple[str, ...] = ()
    domains: tuple[str, ...] = ()
    # the model of the all-models cells in names given to `search` (var all_models_label)
    all_models_label: str = field(default_factory=all_models_label, compare=False)

    def __post_init__(self) -> None:
        for name, given, known in (("measure family", self.families, FAMILIES), ("level", self.levels, LEVELS),
                                   ("domain", self.domains, DOMAINS),
                                   ("category", self.categories, (*GENDERS, *COUPLE_TYPES))):
            unknown = sorted(set(given) - set(known))
            if unknown:
                raise AuditPlanError(f"unknown {name} {', '.join(unknown)}: choose from {', '.join(known)}")
        if not self.families or not self.levels:
            raise AuditPlanError("select at least one measure family and one level")
        if all(self.excluded(family) for family in self.families):
            raise AuditPlanError(f"the selection ({self.label()}) names no corrected cell: {self.why_empty()}; "
                                 "widen --measure, --level, --category or --domain")

    def matches_key(self, family: str, model: str, key: Sequence[str], level: str | None = None) -> bool:
        """Whether the cell of `family`, `model` and `key` is selected (`level`: its level, else from `model`)."""
        if family not in self.families or (level or level_of(model, label=self.all_models_label)) not in self.levels:
            return False
        category = key[-1] if key else ""
        if self.categories and not any(
                category == wanted or (family == "couple" and wanted in GENDERS and wanted in category.split("_"))
                for wanted in self.categories):
            return False
        domain = {"couple": "love", "occupation": "labor"}.get(family, key[0] if key else "")
        return not self.domains or domain in self.domains

    def matches(self, cell: PlanCell) -> bool:
        return self.matches_key(cell.family, cell.model, cell.key, cell.level)

    def search(self, name: str) -> bool:
        """Whether a cell named family/model/key... (bench.correction_check's keys joined by '/') is selected:
        a re.Pattern's `search`, so a selection can stand where a pattern over cell names is taken."""
        family, model, *key = name.split("/")
        return self.matches_key(family, model, key)

    def excluded(self, family: str) -> str | None:
        """Why none of `family`'s cells can match this selection, whatever the warehouse holds (None: some can)."""
        if family == "couple" and self.domains and "love" not in self.domains:
            return "couples are love stories"
        if family == "occupation" and self.domains and "labor" not in self.domains:
            return "occupations are labor stories"
        first = occupation_genders()[0]
        if family == "occupation" and self.categories and first not in self.categories:
            return f"an occupation cell is the {first} share of its holders"
        if family == "gender" and self.categories and not set(self.categories) & set(GENDERS):
            return "gender cells are genders, not couple types"
        return None

    def why_empty(self) -> str:
        """Why this selection may name no corrected cell: the families' domains and categories it excludes."""
        reasons = [reason for family in self.families if (reason := self.excluded(family))]
        return "; ".join(reasons) or "the warehouse has no corrected cell of it (no labeled story of it)"

    def label(self) -> str:
        parts = ["+".join(self.families)]
        if set(self.levels) != set(LEVELS):
            parts.append("/".join(self.levels))
        parts += ["/".join(values) for values in (self.categories, self.domains) if values]
        return ", ".join(parts)


# The selections a user would naturally make, each judged on its own in the validation (bench/bench_audit_allocation.py,
# tests/test_audit_allocation.py, docs/CORRECTION.md).
NATURAL_SELECTIONS = {
    "gender and couple (default)": Selection(),
    "gender": Selection(("gender",)),
    "couple": Selection(("couple",)),
    "all-model cells": Selection(levels=("all-model",)),
    "per-model cells": Selection(levels=("per-model",)),
    "non-binary (shares, couple types)": Selection(categories=("nonbinary",)),
    "learning": Selection(domains=("learning",)),
    "labor": Selection(domains=("labor",)),
    "love (gender, couples)": Selection(domains=("love",)),
}
