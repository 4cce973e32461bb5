-- The twin of SQLite's migration 029 (the requests lists filtered by model within one account; see its comments).
CREATE INDEX jobs_account_model ON jobs(account_id, model_id, id);
