-- Issue 16, redeem codes: written by the redeem codes work (helper A). Until then this migration changes nothing.
SELECT 1;
