-- What a job cost the operator upstream (docs/providers.md "Cost and margin"): the unit cost of the
-- route that ran it times the units delivered (text: tokens), in micro-USD, written in the same
-- transaction as its settlement. NULL: the route has no cost configured (unknown, not zero), or the
-- job is not settled (yet). The margins report sums it beside the revenue of the same jobs.
ALTER TABLE jobs ADD COLUMN cost_usd_micro INTEGER;
