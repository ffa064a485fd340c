"""Router: the additive complexity score over extracted case facts -> model tier.

Runs AFTER Ingestion, on extracted facts (scoring raw text before extraction sends every case to Tier 1).
Rule shipped: every configured gene with a positive/altered status counts as a mutation, germline ones included
(BRCA1/2 alter treatment: PARP inhibitors, platinum). So "stage IV pancreatic, KRAS + BRCA2" scores
rare 0.40 + stage IV 0.25 + >=2 mutations 0.30 = 0.95 -> Tier 2 (the paper's 0.80 leaves BRCA2 out).
The reported score is capped at 1.0 (SCORE_CAP): it is read as a 0-1 complexity, and "1.35" would suggest a scale
that does not exist. The factors still list every weight, so the uncapped sum stays visible, and the tier is
decided on that sum: config allows router.threshold up to 10, and a cap must not make Tier 2 unreachable.
"""

from __future__ import annotations

from dataclasses import replace

from engine.config import RouterConfig
from engine.context import NodeContext
from engine.events import RoutingDecided
from engine.state import CaseFacts, ConsultState, Factor, Routing

SCORE_CAP = 1.0


def score_facts(facts: CaseFacts, cfg: RouterConfig, override: int | None = None) -> Routing:
    w = cfg.weights
    factors: list[Factor] = []
    if facts.rare:
        factors.append(Factor("rare_cancer", w["rare_cancer"], facts.cancer_type or ""))
    if facts.unknown_primary:
        factors.append(Factor("unknown_primary", w["unknown_primary"], "primary site unknown"))
    if facts.stage == "IV":
        factors.append(Factor("stage_iv", w["stage_iv"], facts.stage_text or "stage IV"))
    elif facts.stage == "III":
        factors.append(Factor("stage_iii", w["stage_iii"], facts.stage_text or "stage III"))
    if len(facts.genes) >= 2:
        factors.append(Factor("multiple_mutations", w["multiple_mutations"], ", ".join(facts.genes)))
    elif len(facts.genes) == 1:
        factors.append(Factor("single_mutation", w["single_mutation"], facts.genes[0]))
    if facts.prior_treatments:
        factors.append(Factor("prior_treatment", w["prior_treatment"], ", ".join(facts.prior_treatments)))
    total = round(sum(f.weight for f in factors), 4)
    auto_tier = 2 if total >= cfg.threshold else 1
    return Routing(score=min(total, SCORE_CAP), auto_tier=auto_tier, tier=override or auto_tier,
                   factors=tuple(factors), override=override)


async def run(state: ConsultState, ctx: NodeContext) -> ConsultState:
    routing = score_facts(state.facts, ctx.settings.router, state.tier_override)
    ctx.emit(RoutingDecided(state.thread_id, state.consult_id, routing))
    return replace(state, routing=routing)
