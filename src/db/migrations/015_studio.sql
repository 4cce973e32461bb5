-- The studio (issue 17): jobs opened by a signed-in person from the console, without an API key.
-- jobs.person_id names that person (NULL for API jobs); people.open_jobs is the per-person
-- in-flight count, kept by JobStore in the same transactions as the job's open and final states
-- (as api_keys.open_jobs is for keys), so the studio's cap is an O(1) check.
ALTER TABLE jobs ADD COLUMN person_id TEXT REFERENCES people(id);
ALTER TABLE people ADD COLUMN open_jobs INTEGER NOT NULL DEFAULT 0 CHECK (open_jobs >= 0);
-- A person's studio runs, newest first (the studio's history).
CREATE INDEX jobs_by_person ON jobs(person_id, id) WHERE person_id IS NOT NULL;
