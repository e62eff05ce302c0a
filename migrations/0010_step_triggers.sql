-- 0010: per-step trigger rules.
--
-- `trigger` says what a step's parents must have done for it to run
-- (daemon/workflows/definition.ts): 'all_success' (every parent succeeded;
-- a parent that did not makes the step upstream_failed) or 'all_done' (every
-- parent ended, whatever the outcome: a cleanup step; never
-- upstream_failed). `waiting` counts the parents not through yet under the
-- step's rule. Steps of runs started before this migration run after all
-- their parents succeeded, as they always did.
ALTER TABLE workflow_steps ADD COLUMN trigger text NOT NULL DEFAULT 'all_success'
  CHECK (trigger IN ('all_success', 'all_done'));
