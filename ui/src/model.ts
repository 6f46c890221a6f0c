import type { components } from '../../src/client/schema.d.ts';

// What the UI knows of the API's resources, and the pure conversions between a template and its form.
// The resources' types are generated from the service's OpenAPI document (src/client/schema.d.ts), as the typed
// client's are: the UI restates none of them. No DOM here: test/ui/model.test.ts runs it under Node.

type Schemas = components['schemas'];
export type Template = Schemas['Template'];
/** A template as lists show it: with its owner's account name. */
export type TemplateListItem = Schemas['TemplateListItem'];
export type FieldChange = Schemas['FieldChange'];
export type Revision = Schemas['Revision'];
export type Endpoint = Schemas['Endpoint'];
export type Release = Schemas['Release'];
export type RegistryAuth = Schemas['ContainerRegistryAuth'];
export type Secret = Schemas['Secret'];
export type Me = Schemas['Me'];
/** An RFC 9457 problem body, as every API error is. */
export type Problem = Schemas['Problem'];
export type FieldError = NonNullable<Problem['errors']>[number];
export type Category = Template['category'];

export const CATEGORIES = ['NVIDIA', 'AMD', 'CPU'] as const satisfies readonly Category[];
// Every category of the API is listed above: a category added to the API and not here fails to compile.
const everyCategory: Exclude<Category, (typeof CATEGORIES)[number]> extends never ? true : never = true;
void everyCategory;
export const PROTOCOLS = ['http', 'tcp'] as const;

/** The form's state: text as typed, rows as entered. */
export interface TemplateForm {
  name: string;
  imageName: string;
  category: string;
  isServerless: boolean;
  isPublic: boolean;
  containerDiskInGb: string;
  volumeInGb: string;
  volumeMountPath: string;
  containerRegistryAuthId: string;
  /** One argument per line. */
  dockerEntrypoint: string;
  dockerStartCmd: string;
  env: { key: string; value: string }[];
  ports: { port: string; protocol: string }[];
  readme: string;
}

export const EMPTY_FORM: TemplateForm = {
  name: '',
  imageName: '',
  category: 'NVIDIA',
  isServerless: false,
  isPublic: false,
  containerDiskInGb: '50',
  volumeInGb: '20',
  volumeMountPath: '/workspace',
  containerRegistryAuthId: '',
  dockerEntrypoint: '',
  dockerStartCmd: '',
  env: [],
  ports: [],
  readme: '',
};

export function formOf(t: Template): TemplateForm {
  return {
    name: t.name,
    imageName: t.imageName,
    category: t.category,
    isServerless: t.isServerless,
    isPublic: t.isPublic,
    containerDiskInGb: String(t.containerDiskInGb),
    volumeInGb: String(t.volumeInGb),
    volumeMountPath: t.volumeMountPath,
    containerRegistryAuthId: t.containerRegistryAuthId,
    dockerEntrypoint: t.dockerEntrypoint.join('\n'),
    dockerStartCmd: t.dockerStartCmd.join('\n'),
    env: Object.entries(t.env).map(([key, value]) => ({ key, value })),
    ports: t.ports.map((p) => {
      const [port = '', protocol = 'http'] = p.split('/');
      return { port, protocol };
    }),
    readme: t.readme,
  };
}

/** A number as typed; anything that isn't one is sent as it is, so the API names the field. */
const numberOf = (text: string): number | string => (/^\s*-?\d+(\.\d+)?\s*$/.test(text) ? Number(text) : text);
const linesOf = (text: string): string[] => text.split('\n').filter((line) => line.trim() !== '');

/**
 * The request body for the form: every field for a create, every changeable one for an update (category and
 * isServerless are fixed after creation). Values are not judged here: the API's errors are the one truth.
 * Env rows with an empty name and value, and port rows with no port, are blank rows and left out.
 */
export function bodyOf(form: TemplateForm, mode: 'create' | 'update'): Record<string, unknown> {
  const env: Record<string, string> = {};
  for (const row of form.env) if (row.key !== '' || row.value !== '') env[row.key] = row.value;
  const body: Record<string, unknown> = {
    name: form.name,
    imageName: form.imageName.trim(),
    containerDiskInGb: numberOf(form.containerDiskInGb),
    volumeInGb: numberOf(form.volumeInGb),
    volumeMountPath: form.volumeMountPath,
    containerRegistryAuthId: form.containerRegistryAuthId,
    dockerEntrypoint: linesOf(form.dockerEntrypoint),
    dockerStartCmd: linesOf(form.dockerStartCmd),
    env,
    ports: form.ports.filter((row) => row.port.trim() !== '').map((row) => `${row.port.trim()}/${row.protocol}`),
    readme: form.readme,
    isPublic: form.isPublic,
  };
  if (mode === 'create') {
    body.category = form.category;
    body.isServerless = form.isServerless;
  }
  return body;
}

/**
 * Which form control an error's JSON Pointer belongs to: `/ports/0` is the first port row that was sent, `/env/NAME`
 * the env row of that name, `/dockerStartCmd/2` the start command box. Returns the pointer of a control the form has.
 * Blank rows are not sent, so a sent index is mapped back to the row it came from.
 */
export function controlFor(pointer: string, form: TemplateForm): string {
  const [, field = '', item] = pointer.split('/');
  if (field === 'ports' && item !== undefined) {
    const sent = form.ports.map((row, i) => ({ row, i })).filter(({ row }) => row.port.trim() !== '');
    const at = sent[Number(item)];
    return at ? `/ports/${at.i}` : '/ports';
  }
  if (field === 'env' && item !== undefined) {
    const name = item.replace(/~1/g, '/').replace(/~0/g, '~');
    const i = form.env.findIndex((row) => row.key === name);
    return i >= 0 ? `/env/${i}` : '/env';
  }
  return field === '' ? '' : `/${field}`;
}

/** The next page's URL from a `Link: <url>; rel="next"` header, if any. */
export function nextLink(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(',')) {
    const match = /<([^>]*)>\s*;\s*rel="?next"?/i.exec(part);
    if (match) return match[1];
  }
  return undefined;
}
