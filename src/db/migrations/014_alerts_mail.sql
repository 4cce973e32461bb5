-- Issue 16, alerts and mail: written by the alerts and email work (helper C). Until then this migration changes nothing.
SELECT 1;
