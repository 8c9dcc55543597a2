export * from './acquire-once.js';
export * from './netlock.js';
export * from './slot-echo.js';
