-- The requests lists filtered by model within one account (the console's Requests and its CSV,
-- GET /v1/requests?model_id=) walk this index in their own order: the account's jobs of that model,
-- newest first from the cursor. Without it SQLite walked jobs_by_model (every account's jobs of the
-- model) or jobs_account (every job of the account) and filtered: a page of a model that other
-- accounts use heavily, or that this account rarely uses, read history to fill 50 rows. A job's
-- account and model never change, so the index costs one entry per job, written with its insert.
CREATE INDEX jobs_account_model ON jobs(account_id, model_id, id);
