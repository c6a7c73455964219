// PostgreSQL log positions (LSNs) as the server prints them, `16/B374D848`: compared and
// ordered as 64-bit numbers (docs/cdc.md "Positions and checkpoints").

const LSN = /^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/;

export const isLsn = (text: unknown): text is string => typeof text === 'string' && LSN.test(text);

export function lsnValue(lsn: string): bigint {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

/** The LSN in the server's own spelling (upper case, no leading zeros). */
export function lsnText(value: bigint): string {
  return `${(value >> 32n).toString(16).toUpperCase()}/${(value & 0xffffffffn).toString(16).toUpperCase()}`;
}

export const normalLsn = (lsn: string) => lsnText(lsnValue(lsn));

/** Negative, zero or positive as a is before, at or after b. */
export function compareLsn(a: string, b: string): number {
  const d = lsnValue(a) - lsnValue(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}
