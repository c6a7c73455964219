// How a read's sessions are known on the source (docs/cdc.md "The replication session"): the
// replication session's application_name, and the first key of the two-key advisory lock that a
// read holds on its capture (the second is hashtext of the capture's name).
export const STREAM_APPLICATION = 'sluice_cdc';
/** "sluice" spelt in hex. */
export const LOCK_SPACE = 0x51ce;
