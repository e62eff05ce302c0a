/**
 * Who may call what: every RPC needs one permission, and a role is a set of
 * permissions. The table names every method of the API; a method it does not
 * name needs `admin` (a new RPC is closed until someone decides otherwise,
 * and test/unit/permissions.test.ts fails until it is named here).
 */

export const ROLES = ['admin', 'scheduler', 'worker', 'reader'] as const;
export type Role = (typeof ROLES)[number];

/**
 * `public`: health checks (probes carry no credential). `members`: the member
 * list, which every role may read (workers discover the daemons to stream from).
 */
export type Permission = 'public' | 'members' | 'read' | 'schedule' | 'work' | 'admin';

const GRANTS: Record<Role, ReadonlySet<Permission>> = {
  admin: new Set(['public', 'members', 'read', 'schedule', 'work', 'admin']),
  scheduler: new Set(['public', 'members', 'read', 'schedule']),
  worker: new Set(['public', 'members', 'work']),
  reader: new Set(['public', 'members', 'read']),
};

/** By gRPC path (`/package.Service/Method`). */
export const METHOD_PERMISSIONS: Readonly<Record<string, Permission>> = {
  '/timelane.v1.Scheduler/Schedule': 'schedule',
  '/timelane.v1.Scheduler/ScheduleBatch': 'schedule',
  '/timelane.v1.Scheduler/GetJob': 'read',
  '/timelane.v1.Scheduler/GetRun': 'read',
  '/timelane.v1.Scheduler/ListRuns': 'read',
  '/timelane.v1.Scheduler/ListQueues': 'read',
  '/timelane.v1.Scheduler/CancelJob': 'schedule',
  '/timelane.v1.Scheduler/RescheduleJob': 'schedule',
  '/timelane.v1.Scheduler/ListJobs': 'read',
  '/timelane.v1.Scheduler/PauseJob': 'schedule',
  '/timelane.v1.Scheduler/ResumeJob': 'schedule',
  '/timelane.v1.Scheduler/UpdateJob': 'schedule',
  '/timelane.v1.Scheduler/TriggerJob': 'schedule',
  '/timelane.v1.Scheduler/BackfillJob': 'schedule',
  '/timelane.v1.Scheduler/ListDeadRuns': 'read',
  '/timelane.v1.Scheduler/ReplayRuns': 'schedule',
  '/timelane.v1.Worker/Work': 'work',
  '/timelane.v1.Admin/ListShards': 'read',
  '/timelane.v1.Admin/ListMembers': 'members',
  '/timelane.v1.Admin/MoveShard': 'admin',
  '/timelane.v1.Admin/DrainMember': 'admin',
  '/timelane.v1.Admin/Rebalance': 'admin',
  '/timelane.v1.Admin/SetQueueLimits': 'admin',
  '/timelane.v1.Admin/ListQueueLimits': 'read',
  '/timelane.v1.Workflows/PutWorkflow': 'schedule',
  '/timelane.v1.Workflows/StartWorkflow': 'schedule',
  '/timelane.v1.Workflows/StartWorkflows': 'schedule',
  '/timelane.v1.Workflows/GetWorkflowRun': 'read',
  '/timelane.v1.Workflows/ListWorkflowRuns': 'read',
  '/timelane.v1.Workflows/RetryWorkflowRun': 'schedule',
  '/timelane.v1.Workflows/CancelWorkflowRun': 'schedule',
  '/grpc.health.v1.Health/Check': 'public',
  '/grpc.health.v1.Health/Watch': 'public',
  // Reflection lists the API's shape, not its data.
  '/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo': 'read',
  '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo': 'read',
};

export function permissionOf(path: string): Permission {
  return METHOD_PERMISSIONS[path] ?? 'admin';
}

export function roleAllows(role: Role, permission: Permission): boolean {
  return GRANTS[role].has(permission);
}

export function isRole(v: unknown): v is Role {
  return typeof v === 'string' && (ROLES as readonly string[]).includes(v);
}
