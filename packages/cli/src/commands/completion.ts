import type { Command } from 'commander';
import { CliError, ExitCode } from '../exit';

// `sluice completion bash|zsh` prints a completion script generated from the command tree
// itself, so every command added later completes without touching this file.

type Node = { path: string; subcommands: string[]; options: string[] };

function walk(cmd: Command, prefix: string[], out: Node[]) {
  const subs = cmd.commands.map((c) => c.name());
  const options = [
    ...cmd.options.flatMap((o) => [o.long, o.short].filter((x): x is string => !!x)),
    '--help',
  ];
  out.push({ path: prefix.join(' '), subcommands: subs, options });
  for (const c of cmd.commands) walk(c, [...prefix, c.name()], out);
}

const words = (list: string[]) => list.join(' ');

export function bashScript(program: Command): string {
  const nodes: Node[] = [];
  walk(program, [], nodes);
  const cases = nodes
    .map((n) => `    "${n.path}") words="${words([...n.subcommands, ...n.options])}" ;;`)
    .join('\n');
  return `# bash completion for sluice: source <(sluice completion bash)
_sluice() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" w i
  # The command path: the words before the cursor that name subcommands.
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ $w == -* ]] && continue
    case "$(_sluice_words "\${path:+$path }$w")" in
      __none__) ;;
      *) path="\${path:+$path }$w" ;;
    esac
  done
  COMPREPLY=( $(compgen -W "$(_sluice_words "$path")" -- "$cur") )
}
_sluice_words() {
  local words=__none__
  case "$1" in
${cases}
  esac
  echo "$words"
}
complete -o default -F _sluice sluice
`;
}

export function zshScript(program: Command): string {
  return `#compdef sluice
# zsh completion for sluice: source <(sluice completion zsh), or save as _sluice in $fpath
autoload -U +X bashcompinit && bashcompinit
${bashScript(program)}`;
}

export function completionCommand(program: Command) {
  program
    .command('completion <shell>')
    .description('Print a shell completion script: bash or zsh (source <(sluice completion bash))')
    .action((shell: string) => {
      if (shell === 'bash') return void process.stdout.write(bashScript(program));
      if (shell === 'zsh') return void process.stdout.write(zshScript(program));
      throw new CliError(ExitCode.failed, 'completion: the shell must be bash or zsh');
    });
}
