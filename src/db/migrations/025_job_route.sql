-- Which of its model's routes a job runs on (docs/providers.md "Routes"): `route` is the index in
-- the model's `routes` (0 for a single-route model), beside `provider` (the route's provider, which
-- the claim index jobs_queued(provider, model_id, seq) already reads). `route_tries`: how many routes
-- in a row refused the job before accepting it (the worker's fallback walks the routes once, then
-- backs off on the first). Operator-only: no door renders either column.
ALTER TABLE jobs ADD COLUMN route INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN route_tries INTEGER NOT NULL DEFAULT 0;
