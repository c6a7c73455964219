import { Option } from 'commander';
import { defaultOrg } from './profile';

// One grammar for every command (docs/cli.md "One grammar"): the scope flags are `--org`,
// `--project`, `--env` and `--pipeline` everywhere, `--org` defaults the same way everywhere,
// and an older spelling keeps working as a hidden alias of the flag it stands for.

/** `--org`: the flag, else SLUICE_ORG, else the active profile's organization. */
export const orgOption = () =>
  new Option('--org <slug>', 'organization slug (default: env SLUICE_ORG or the profile)')
    .default(defaultOrg())
    .makeOptionMandatory();

/**
 * An old spelling of a flag, accepted but not shown in --help: it sets the same option value
 * (`attribute`, the camel-case name of the flag it stands for), so required checks see it too.
 */
export function hiddenAlias(flags: string, attribute: string): Option {
  const option = new Option(flags).hideHelp();
  option.attributeName = () => attribute;
  return option;
}
