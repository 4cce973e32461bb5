-- What a job's webhook carries: gengate's request record (every door but one), or Replicate's
-- prediction object for a job created through the Replicate door with a `webhook` (Replicate's
-- clients read the prediction, docs/clients.md "Replicate"). Chosen when the job is opened.
ALTER TABLE jobs ADD COLUMN webhook_body TEXT NOT NULL DEFAULT 'record'
  CHECK (webhook_body IN ('record', 'prediction'));
