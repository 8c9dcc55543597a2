/** Largest READ or WRITE one work request may carry; bigger transfers are split by the caller. */
export const MAX_TRANSFER_BYTES = 1 << 20;
