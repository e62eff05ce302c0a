/**
 * Retry backoff: exponential with full jitter (AWS's "full jitter"), capped.
 * Attempt n (the one that failed) waits random(0, min(cap, base * 2^(n-1))).
 * The floor keeps a retry from landing in the same millisecond as its failure.
 */
export interface BackoffPolicy {
  initialBackoffMs: number;
  maxBackoffMs: number;
}

export function backoffMs(failedAttempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** Math.max(0, failedAttempt - 1));
  return Math.max(1, Math.floor(exp * random()));
}
