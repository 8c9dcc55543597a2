// The subject builders live with the control plane (libs/control), which runs on NATS and in sim alike.
export { createSubjects, SubjectTokenError, type Subjects } from '@lockfabric/control';
