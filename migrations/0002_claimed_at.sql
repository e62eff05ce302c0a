-- 0002: record what happened at each hand-out. `claimed_at` is when the
-- fenced claim (or redelivery) took the run; `fired_at` becomes the moment it
-- was handed to a worker stream, written with the worker's answer (or within
-- a second of the hand-off when no answer comes), and NULL until then.
ALTER TABLE runs ADD COLUMN claimed_at timestamptz;
UPDATE runs SET claimed_at = fired_at WHERE fired_at IS NOT NULL;
