/**
 * FissLock's family of control subjects (Subjects.recoveryCall and protocolReport): its S1–S3
 * calls go to `ctl.fiss.<machine>.<verb>`, its stuck-lock reports to `ctl.report.fiss.stuck`.
 */
export const FISS_SUBJECTS = 'fiss';
