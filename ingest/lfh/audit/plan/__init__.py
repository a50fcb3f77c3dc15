"""How many stories to hand-label, and from which strata (docs/CORRECTION.md, "Planning the hand labels").

For every corrected cell (the rows of int_gender_shares_corrected, int_couple_shares_corrected and
int_occupation_shares_corrected) the plan predicts the half-width of the corrected interval as a function of the
hand-labeled stories per stratum (model x domain x prompt condition, the strata of `lfh audit-sample`), from the
stratified PPI variance of the share's linearised outcome u = (a - r b) / b:

    Var(r) = sum_h w_h^2 [ Var_h(f_a - r f_b) / N_h + Var_h(d_a - r d_b) / n_h ] / b^2,   d = y - f,

with the same choices as the marts: a per-model cell uses its own hand labels from var ppi_cell_min_hand_labeled
(20) units on, else the pool over models; no value below var ppi_min_hand_labeled (20). Var_h(f...) comes from the
machine labels of the stratum; the residual variance Var_h(d...) from the hand labels already in the warehouse (the
pilot), shrunk towards the value the labeler's confusion matrix implies (the matrix of the family's hand labels,
itself smoothed towards a conservative default error rate; that default alone when there is no hand label).

`plan_allocation` spreads a budget (or reaches a target half-width) greedily, one step at a time to the stratum
that most lowers the summed predicted half-width of the selected cells (what the validation judges: their mean
width; PlanSettings.objective "variance" minimises the summed variance instead, which for one cell over strata is
Neyman's allocation in whole stories, n_h proportional to w_h S_h), with the marts' cell/pool rules included.

The package, one job per module: model (the families, settings and cells), terms and composite and variance (the
predicted variance of a cell), cells (the cells' moments from the warehouse's units), reads (what the plan reads
from the warehouse), selection (the cells an allocation serves), optimiser (where the stories go), tables (what the
plan prints and writes).
"""

from lfh.audit.plan.cells import build_cells, confusion_matrix
from lfh.audit.plan.composite import chi_square_lower_quantile, composite_variance
from lfh.audit.plan.model import (
    DEFAULT_FAMILIES,
    FAMILIES,
    MACHINE_CLASSES,
    MACHINE_MEANS,
    OBJECTIVES,
    STRATA,
    AuditPlanError,
    Plan,
    PlanCell,
    PlanSettings,
    Stratum,
    StratumPart,
    StratumStories,
    linearised,
)
from lfh.audit.plan.optimiser import best_cell_half_width, plan_allocation, stratum_floors
from lfh.audit.plan.reads import build_plan, build_vars, mask_units, read_plan, read_units, strata_stories
from lfh.audit.plan.selection import DOMAINS, NATURAL_SELECTIONS, Selection
from lfh.audit.plan.tables import (
    PlanResult,
    cell_predictions,
    family_summary,
    make_plan,
    proportional_curve,
    strata_table,
)
from lfh.audit.plan.terms import machine_term, rectifier_term
from lfh.audit.plan.variance import cell_variance, half_width, interval_hand_units, predicted_half_width
from lfh.categories import COUPLE_TYPES, GENDERS, LEVELS

__all__ = [
    "COUPLE_TYPES", "DEFAULT_FAMILIES", "DOMAINS", "FAMILIES", "GENDERS", "LEVELS", "MACHINE_CLASSES",
    "MACHINE_MEANS", "NATURAL_SELECTIONS", "OBJECTIVES", "STRATA",
    "AuditPlanError", "Plan", "PlanCell", "PlanResult", "PlanSettings", "Selection", "Stratum", "StratumPart",
    "StratumStories", "best_cell_half_width", "build_cells", "build_plan", "build_vars", "cell_predictions",
    "cell_variance", "chi_square_lower_quantile", "composite_variance", "confusion_matrix", "family_summary",
    "half_width", "interval_hand_units", "linearised", "machine_term", "make_plan", "mask_units", "plan_allocation",
    "predicted_half_width", "proportional_curve", "read_plan", "read_units", "rectifier_term", "strata_stories",
    "strata_table", "stratum_floors",
]
