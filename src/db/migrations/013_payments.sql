-- Issue 16, payments: written by the payments work (helper B). Until then this migration changes nothing.
SELECT 1;
