export { AVAILABLE_SWITCH_PROGRAMS, createSwitchProgram } from './switch-program.js';
export { startSwitchDataplane, SWITCH_FAULT_TARGET, type SwitchDataplane, type SwitchDataplaneDeps } from './switch-dataplane.js';
export { Dataplane, DEFAULT_MAX_DELAYED_PACKETS, DROP_DELAY_OVERFLOW, DROP_FAULT_LOSS, DROP_INTERNAL_ERROR, DROP_PROGRAM_ERROR, type DataplaneOptions, type DataplaneStats } from './dataplane.js';
export { DelayedDeliveries, realTimers, type Timers } from './delayed-deliveries.js';
export { DEFAULT_REORDER_WINDOW_NS, MAX_FAULT_DELAY_NS, faultFromWire, faultTargetsRack, selectorKey, type ConvertedFault, type FaultSelector } from './fault-spec-wire.js';
export { SwitchFaults } from './switch-faults.js';
export { MAX_REGISTERS_PER_CALL, startSwitchControlServer, type SwitchControlOptions, type SwitchControlServer } from './switch-control-server.js';
export { registerSwitchMetrics, type SwitchMetricsSources } from './switch-metrics.js';
