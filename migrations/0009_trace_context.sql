-- 0009: trace context (OpenTelemetry; W3C Trace Context) carried by a run.
--
-- `traceparent` / `tracestate`: the trace a run belongs to, as the W3C
-- headers' text. Written by Schedule / ScheduleBatch from the call's gRPC
-- metadata (the client's span, or the daemon's Schedule span when the daemon
-- exports traces), copied to a retry by Fail, read by the claim and handed to
-- the worker in DeliveredRun. It is what ties the spans of one run together
-- across processes: scheduled on one daemon, fired by another after a
-- failover. NULL: the run carries none (recurring occurrences, workflow
-- steps, replays, and runs scheduled outside a trace).
--
-- Runs only, not jobs: a recurring job's occurrences do not join the trace
-- that created the job (a job firing every minute for a year would make one
-- endless trace); each occurrence starts a trace of its own at its claim.
--
-- Nullable with no default: adding them rewrites nothing (catalog only).
ALTER TABLE runs
  ADD COLUMN traceparent text,
  ADD COLUMN tracestate text;
