import { type Capabilities, type CapabilityName, type ConnectorDefinition, ConnectorError } from './types';

// Reaching a connector's capabilities (docs/architecture.md "Connectors"): a call site asks for
// the capability and never checks a member of it.

/** How a refusal names a capability ("… do not support schema import"). */
const capabilityWords: Record<CapabilityName, string> = {
  query: 'saved queries',
  source: 'pipeline sources',
  sink: 'pipeline sinks',
  ledger: 'a sink ledger',
  sessions: 'pooled sessions',
  discover: 'schema import',
  branches: 'branch listing',
  proof: 'proof',
  checks: 'publishing checks',
  changes: 'change data capture',
};

/**
 * The one way to reach a capability: the kind's capability object, or the error `refuse`
 * makes of the sentence saying it is missing (by default ConnectorError UNSUPPORTED_OPERATION;
 * the server passes its own error of the API contract).
 */
export function capabilityOf<N extends CapabilityName>(
  def: ConnectorDefinition,
  name: N,
  refuse: (message: string) => Error = (m) => new ConnectorError('UNSUPPORTED_OPERATION', m),
): Capabilities[N] {
  const capability = def[name] as Capabilities[N] | undefined;
  if (!capability) throw refuse(`data sources of type ${def.type} do not support ${capabilityWords[name]}`);
  return capability;
}

/** For behaviour that is skipped, not refused, without the capability (a ledger, checks). */
export function optionalCapability<N extends CapabilityName>(
  def: ConnectorDefinition,
  name: N,
): Capabilities[N] | null {
  return (def[name] as Capabilities[N] | undefined) ?? null;
}

/** The capabilities a kind offers, in the order of Capabilities. */
export function capabilitiesOf(def: ConnectorDefinition): CapabilityName[] {
  return (Object.keys(capabilityWords) as CapabilityName[]).filter((n) => def[n] !== undefined);
}

/** `load` of a capability whose code is loaded with its connector and that loads nothing later. */
export const loadedWithConnector = async (): Promise<void> => {};

/**
 * `load` of a capability whose code loads on first use: the same imports its calls make (and
 * the libraries they need), all at once, so a worker holds them before its first run.
 */
export const loadedBy =
  (...loads: (() => unknown)[]) =>
  async (): Promise<void> => {
    await Promise.all(loads.map((load) => load()));
  };
