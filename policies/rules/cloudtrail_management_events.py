"""CloudTrail trails record every management event, global services' included.

A trail with advanced event selectors records only what they select: selectors for S3 data events alone
silently stop the trail recording who changed IAM, KMS or the clusters. A basic selector can switch management
events off, or keep only reads or writes; and a multi-region trail without global service events misses IAM
and STS.
"""

from ..props import as_list, get, truthy
from ..registry import Counterexample, resource_rule

TRAIL = "aws:cloudtrail/trail:Trail"


def _drop_management(props: dict) -> dict:
    selectors = [
        s
        for s in props.get("advancedEventSelectors", [])
        if not any(
            f.get("field") == "eventCategory" and "Management" in f.get("equals", []) for f in s["fieldSelectors"]
        )
    ]
    return {**props, "advancedEventSelectors": selectors}


@resource_rule(
    name="cloudtrail-management-events",
    description="CloudTrail trails record every management event (reads and writes), with global service events.",
    severity="high",
    fix="`sites[].audit.cloudtrail`: true makes Lattice's trail, which records every management event; an adopted "
    "trail: `aws cloudtrail put-event-selectors`",
    remediation="With advanced_event_selectors, add one selecting eventCategory = Management (no readOnly filter); "
    "with event_selectors, keep include_management_events=True and read_write_type='All'; keep "
    "include_global_service_events=True.",
    resource_types=(TRAIL,),
    counterexample=Counterexample(
        TRAIL,
        _drop_management,
        select=lambda trail, plan: bool(trail["inputs"].get("advancedEventSelectors")),
    ),
    category="audit",
)
def cloudtrail_management_events(args):
    advanced = as_list(get(args.props, "advancedEventSelectors"))
    basic = as_list(get(args.props, "eventSelectors"))
    if advanced:
        management = [
            s
            for s in advanced
            if any(
                get(f, "field") == "eventCategory" and "Management" in as_list(get(f, "equals"))
                for f in as_list(get(s, "fieldSelectors"))
            )
        ]
        if not management:
            yield "the advanced event selectors select no management events"
        elif all(any(get(f, "field") == "readOnly" for f in as_list(get(s, "fieldSelectors"))) for s in management):
            yield "the management event selector keeps only reads or only writes"
    for selector in basic:
        if get(selector, "includeManagementEvents") is False:
            yield "an event selector turns management events off"
        elif get(selector, "readWriteType", default="All") != "All":
            yield f"an event selector records only {get(selector, 'readWriteType')} management events"
    if get(args.props, "includeGlobalServiceEvents") is False and truthy(get(args.props, "isMultiRegionTrail")):
        yield "the multi-region trail leaves out global service events (IAM, STS)"
