export * from './netlock.js';
export * from './slot-echo.js';
