/**
 * Batches worker Completes: every Complete that arrives while a batch is being
 * written joins the next one, so Postgres sees one statement (one commit) per
 * batch instead of one per run. States: idle → writing (≤ MAX_IN_FLIGHT
 * batches) → idle. Each caller still gets its own outcome: OK, or the
 * refusal for a superseded delivery.
 */
import type { Db } from '../db/pool.js';
import type { DeliveryIdentity } from './delivery-hub.js';
import { completeRuns } from './answers.js';

const MAX_IN_FLIGHT = 2;
const MAX_BATCH = 1000;
const GATHER_MS = 2;

interface Waiter {
  d: DeliveryIdentity;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class CompleteBatcher {
  private queue: Waiter[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly db: Db) {}

  complete(d: DeliveryIdentity): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ d, resolve, reject });
      // Gather what arrives within GATHER_MS (acks are not on the fire path;
      // one commit per run would be).
      if (!this.scheduled) {
        this.scheduled = true;
        setTimeout(() => {
          this.scheduled = false;
          this.flush();
        }, GATHER_MS);
      }
    });
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < MAX_IN_FLIGHT) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.inFlight++;
      completeRuns(
        this.db,
        batch.map((w) => w.d),
      )
        .then(
          (outcomes) => outcomes.forEach((err, i) => (err ? batch[i].reject(err) : batch[i].resolve())),
          (err: unknown) => batch.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          this.inFlight--;
          this.flush();
        });
    }
  }
}
