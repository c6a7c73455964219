// A COPY runs for as long as its rows take, so the session's statement_timeout is lifted for the
// rest of the transaction around it and set back afterwards.

/** Lifts statement_timeout for the rest of the transaction; answers the value it had (`t`). */
export const LIFT_SQL =
  "SELECT current_setting('statement_timeout') AS t, set_config('statement_timeout', '0', true)";

/** Sets statement_timeout back to `$1`, the value LIFT_SQL answered, for the rest of the transaction. */
export const RESTORE_SQL = "SELECT set_config('statement_timeout', $1, true)";
