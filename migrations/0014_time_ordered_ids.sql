-- 0014: time-ordered ids for the jobs Postgres makes itself.
--
-- The daemon makes job and workflow run ids as UUIDv7 (daemon/ids.ts): a key
-- goes to the right edge of jobs_pkey, runs_job and workflow_steps_job, not to
-- a random page of them (with millions of jobs, a page read and, after each
-- checkpoint, a whole page in the WAL per key). A workflow step's job is made
-- by the statement that starts the step, so Postgres makes the same kind:
-- gen_random_uuid() with its first 48 bits replaced by the Unix time in ms and
-- its version bits set to 7 (PostgreSQL 18 has uuidv7(); 15 does not).
CREATE FUNCTION uuid_v7() RETURNS uuid LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
  SELECT encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
              PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;
