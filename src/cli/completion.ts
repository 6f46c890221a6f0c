import type { Command } from 'commander';

// podplate completion bash|zsh|fish: completion scripts written from the command tree itself, so every command,
// alias and flag that --help shows completes, and nothing else.

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface Node {
  names: string[];
  description: string;
  /** The values of its first argument, where they are few (completion's shells). */
  values: string[];
  /** `choices`: the values a flag takes, where they are few (`-o`: table, wide, json, yaml). */
  flags: { names: string[]; description: string; choices: string[] }[];
  children: Node[];
}

function tree(command: Command): Node {
  return {
    names: [command.name(), ...command.aliases()],
    description: command.description().split(/[.:]( |$)/)[0] ?? '',
    values: command.registeredArguments[0]?.argChoices ?? [],
    flags: command.options
      .filter((o) => !o.hidden)
      .map((o) => ({
        names: [o.long, o.short].filter((f): f is string => !!f),
        description: o.description,
        choices: o.argChoices ?? [],
      })),
    children: command.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden).map(tree),
  };
}

const words = (list: string[]) => list.join(' ');
const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const HELP = ['--help', '-h'];

const candidatesOf = (node: Node) => quoted(words([...node.values, ...node.flags.flatMap((f) => f.names), ...HELP]));

/** Every flag that takes one of a few values, as `-o|--output) 'table wide json yaml'` (the same flag, the same values). */
function choiceCases(root: Node): string[] {
  const cases = new Map<string, string>();
  const visit = (node: Node) => {
    for (const f of node.flags) if (f.choices.length > 0) cases.set(f.names.join('|'), quoted(words(f.choices)));
    node.children.forEach(visit);
  };
  visit(root);
  return [...cases].map(([names, choices]) => `    ${names}) COMPREPLY=($(compgen -W ${choices} -- "$cur")); return ;;`);
}

function bash(root: Node): string {
  const cases: string[] = [];
  for (const top of root.children) {
    for (const name of top.names) {
      if (top.children.length > 0) {
        cases.push(`    "${name}") candidates=${quoted(words(top.children.flatMap((c) => c.names).concat(HELP)))} ;;`);
        for (const sub of top.children)
          for (const subName of sub.names) cases.push(`    "${name} ${subName}"*) candidates=${candidatesOf(sub)} ;;`);
      } else cases.push(`    "${name}"*) candidates=${candidatesOf(top)} ;;`);
    }
  }
  return `# podplate completion for bash: source <(podplate completion bash)
_podplate() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" path="" candidates="" i
  case "$prev" in
${choiceCases(root).join('\n')}
  esac
  for ((i = 1; i < COMP_CWORD; i++)); do
    [[ "\${COMP_WORDS[i]}" == -* ]] && break
    path="\${path:+$path }\${COMP_WORDS[i]}"
  done
  case "$path" in
    "") candidates=${quoted(words(root.children.flatMap((c) => c.names).concat(['--version', '--help'])))} ;;
${cases.join('\n')}
  esac
  COMPREPLY=($(compgen -W "$candidates" -- "$cur"))
}
complete -o default -F _podplate podplate
`;
}

const zshItem = (name: string, description: string) => quoted(`${name.replace(/:/g, '\\:')}:${description}`);

function zsh(root: Node): string {
  const flagsOf = (node: Node) => node.flags.flatMap((f) => f.names.map((n) => zshItem(n, f.description))).join(' ');
  const branches: string[] = [];
  for (const top of root.children) {
    const pattern = top.names.join('|');
    if (top.children.length === 0) {
      branches.push(`    ${pattern}) items=(${flagsOf(top)}); _describe -t flags flag items ;;`);
      continue;
    }
    const subs = top.children.flatMap((c) => c.names.map((n) => zshItem(n, c.description))).join(' ');
    const inner = top.children
      .map((c) => `        ${c.names.join('|')}) items=(${flagsOf(c)}); _describe -t flags flag items ;;`)
      .join('\n');
    branches.push(
      `    ${pattern})\n      if (( CURRENT == 3 )); then items=(${subs}); _describe -t commands command items\n      else case $words[3] in\n${inner}\n      esac; fi ;;`,
    );
  }
  const tops = root.children.flatMap((c) => c.names.map((n) => zshItem(n, c.description))).join(' ');
  return `#compdef podplate
# podplate completion for zsh: source <(podplate completion zsh), or save as _podplate in your $fpath
_podplate() {
  local -a items
  if (( CURRENT == 2 )); then items=(${tops}); _describe -t commands command items; return; fi
  case $words[2] in
${branches.join('\n')}
  esac
}
if [[ "$funcstack[1]" == _podplate ]]; then _podplate "$@"; else compdef _podplate podplate; fi
`;
}

function fish(root: Node): string {
  const lines = ['# podplate completion for fish: podplate completion fish | source', 'complete -c podplate -f'];
  const tops = root.children.flatMap((c) => c.names);
  for (const top of root.children) {
    for (const name of top.names)
      lines.push(`complete -c podplate -n "not __fish_seen_subcommand_from ${words(tops)}" -a ${name} -d ${quoted(top.description)}`);
    const flag = (f: Node['flags'][number], condition: string) => {
      const long = f.names.find((n) => n.startsWith('--'))?.slice(2);
      const short = f.names.find((n) => !n.startsWith('--'))?.slice(1);
      const choices = f.choices.length > 0 ? ` -x -a ${quoted(words(f.choices))}` : '';
      return `complete -c podplate -n "${condition}"${long ? ` -l ${long}` : ''}${short ? ` -s ${short}` : ''}${choices} -d ${quoted(f.description)}`;
    };
    const inTop = `__fish_seen_subcommand_from ${words(top.names)}`;
    if (top.children.length === 0) {
      if (top.values.length > 0) lines.push(`complete -c podplate -n "${inTop}" -a ${quoted(words(top.values))}`);
      for (const f of top.flags) lines.push(flag(f, inTop));
      continue;
    }
    const subs = top.children.flatMap((c) => c.names);
    for (const sub of top.children) {
      for (const name of sub.names)
        lines.push(
          `complete -c podplate -n "${inTop}; and not __fish_seen_subcommand_from ${words(subs)}" -a ${name} -d ${quoted(sub.description)}`,
        );
      for (const f of sub.flags) lines.push(flag(f, `${inTop}; and __fish_seen_subcommand_from ${words(sub.names)}`));
    }
  }
  return `${lines.join('\n')}\n`;
}

export function completionScript(program: Command, shell: Shell): string {
  const root = tree(program);
  return shell === 'bash' ? bash(root) : shell === 'zsh' ? zsh(root) : fish(root);
}
