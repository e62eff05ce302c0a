/** Registry of things a test started and must stop (daemons, workers, clients). */
const live = new Map<object, string>();

export function track<T extends object>(thing: T, label: string): T {
  live.set(thing, label);
  return thing;
}

export function untrack(thing: object): void {
  live.delete(thing);
}

export function liveResources(): string[] {
  return [...live.values()];
}
