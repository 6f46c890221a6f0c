import type { Category, TemplateRecord } from '../src/domain/template.ts';

// The scale run's catalogue: what a GPU cloud's registry holds, drawn row by row from a deterministic generator, so
// that every run seeds the same rows and any row can be drawn again alone (its draws are seeded by its number).
// Many owners, most with a few templates and a few with thousands; about 30 % public; a few % official; NVIDIA,
// AMD and CPU as 85/10/5; 20 % Serverless; names and images from the vocabulary such registries hold.

/** Terms the search scenarios look for, and what the catalogue makes of each. */
export const TERMS = {
  /** In about 30 % of the rows (the PyTorch images and names). */
  common: 'pytorch',
  /** In exactly RARE_ROWS rows, public community templates spread over the range. */
  rare: 'quokkaflux',
  /** In no row: no vocabulary word holds it. */
  none: 'xylophone',
  /**
   * In no row, though about 4 % hold every trigram of it (images `pytorch:2.1.0-py3.10` and `pytorch:2.4.0-py3.11`):
   * what a trigram index checks most rows for.
   */
  nearMiss: 'pytorch:2.1.0-py3.11',
  /** A 2-character term in a few % of the rows ("sdxl", "sd-webui", "sd 1.5"). */
  short: 'sd',
  /** A 2-character term in no row: a walk reads its whole budget and finds nothing. */
  shortNone: 'qj',
} as const;

export const RARE_ROWS = 10;

/** The owners of `total` templates: about 60,000 for a million. */
export const ownersOf = (total: number) => Math.max(1, Math.round(total * 0.06));
export const ownerId = (i: number) => `u${String(i).padStart(15, '0')}`;
export const PLATFORM_OWNERS = [
  { id: 'p000000000000001', name: 'runpod' },
  { id: 'p000000000000002', name: 'runpod-workers' },
];
const HANDLES = [
  'alice',
  'bob',
  'kohya',
  'ml-lab',
  'gpu.guy',
  'diffusion_fan',
  'llm-ops',
  'vision-team',
  'acme',
  'studio',
  'dev',
  'research',
];
export const ownerName = (i: number) => `${HANDLES[i % HANDLES.length]}-${i}`;

/** The row's own random numbers: mulberry32, seeded by a hash of the row's number. */
function draws(n: number): () => number {
  let a = Math.imul(n ^ 0x5bd1e995, 0x9e3779b1) ^ 0x2545f491;
  a = Math.imul(a ^ (a >>> 15), 0x85ebca6b);
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(r: () => number, items: readonly T[]): T => items[Math.floor(r() * items.length)] as T;

interface Family {
  weight: number;
  names: string[];
  /** `{owner}` is the owner's name, for images of the owner's own repository. */
  images: string[];
  ports: string[][];
  env: Record<string, string>[];
  serverlessImages?: string[];
}

const PYTORCH_IMAGES = [
  'runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04',
  'runpod/pytorch:2.2.0-py3.10-cuda12.1.1-devel-ubuntu22.04',
  'runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04',
  'pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime',
  'docker.io/{owner}/pytorch-train:v3',
];
const NOTEBOOK_PORTS = [['8888/http', '22/tcp'], ['8888/http'], ['8888/http', '6006/http', '22/tcp']];
const HF = { HF_HOME: '/workspace/hf' };

/** The NVIDIA catalogue by family; the weights make the common term's share about 30 %. */
const FAMILIES: Family[] = [
  {
    weight: 30,
    names: ['pytorch notebook', 'pytorch training', 'fine-tune llama (pytorch)', 'pytorch dev box', 'lora trainer', 'axolotl fine-tune'],
    images: PYTORCH_IMAGES,
    ports: NOTEBOOK_PORTS,
    env: [HF, { JUPYTER_PASSWORD: 'changeme', ...HF }, {}],
    serverlessImages: ['runpod/worker-pytorch:1.2.0', 'docker.io/{owner}/pytorch-inference:latest'],
  },
  {
    weight: 15,
    names: ['stable diffusion webui', 'sdxl turbo', 'sd 1.5 automatic1111', 'forge webui', 'sd-webui with controlnet', 'fooocus'],
    images: [
      'runpod/stable-diffusion:web-ui-10.2.1',
      'ashleykza/stable-diffusion-webui:1.9.3',
      'ashleykza/forge:2.0.0',
      'docker.io/{owner}/sd-webui:v2',
    ],
    ports: [['3000/http', '8888/http', '22/tcp'], ['7860/http']],
    env: [{}, { COMMANDLINE_ARGS: '--xformers --api' }],
    serverlessImages: ['runpod/worker-a1111:1.0.0', 'runpod/worker-sdxl:3.0.0'],
  },
  {
    weight: 13,
    names: ['ComfyUI', 'comfyui flux dev', 'ComfyUI with manager', 'comfy video (hunyuan)', 'comfyui sdxl workflow'],
    images: ['ashleykza/comfyui:v0.2.2', 'runpod/comfyui:latest', 'docker.io/{owner}/comfyui-flux:latest'],
    ports: [['8188/http', '22/tcp'], ['8188/http']],
    env: [{}, HF],
    serverlessImages: ['runpod/worker-comfyui:5.1.0-base', 'docker.io/{owner}/comfy-worker:1.4'],
  },
  {
    weight: 13,
    names: ['vllm llama 3 8b', 'mistral 7b instruct (vllm)', 'qwen2 72b awq', 'openai-compatible llm server', 'mixtral 8x7b'],
    images: ['vllm/vllm-openai:v0.5.0', 'vllm/vllm-openai:v0.6.3', 'docker.io/{owner}/vllm-custom:0.4'],
    ports: [['8000/http']],
    env: [
      { MODEL_NAME: 'meta-llama/Meta-Llama-3-8B-Instruct', MAX_MODEL_LEN: '8192' },
      { MODEL_NAME: 'mistralai/Mistral-7B-Instruct-v0.3', GPU_MEMORY_UTILIZATION: '0.95' },
    ],
    serverlessImages: ['runpod/worker-v1-vllm:stable-cuda12.1.0', 'runpod/worker-v1-vllm:v1.3.0stable-cuda12.1.0'],
  },
  {
    weight: 10,
    names: ['ollama', 'text generation webui', 'llama.cpp server', 'tgi llama 3', 'koboldcpp', 'open webui + ollama'],
    images: [
      'ollama/ollama:0.1.48',
      'ghcr.io/ggerganov/llama.cpp:server-cuda',
      'ghcr.io/huggingface/text-generation-inference:2.0.4',
      'valyriantech/text-generation-webui-oneclick:latest',
    ],
    ports: [['11434/http'], ['7860/http', '5000/http'], ['8080/http']],
    env: [{}, { OLLAMA_MODELS: '/workspace/ollama' }],
    serverlessImages: ['docker.io/{owner}/llama-worker:2.1'],
  },
  {
    weight: 6,
    names: ['whisper asr', 'faster-whisper large v3', 'speech to text api', 'xtts voice cloning'],
    images: ['onerahmet/openai-whisper-asr-webservice:latest-gpu', 'docker.io/{owner}/whisperx:1.0'],
    ports: [['9000/http']],
    env: [{ ASR_MODEL: 'large-v3' }, {}],
    serverlessImages: ['runpod/worker-faster_whisper:0.4.0'],
  },
  {
    weight: 8,
    names: ['jupyter lab', 'data science notebook', 'rapids notebook', 'jupyter with cuda 12'],
    images: [
      'jupyter/datascience-notebook:2024-05-27',
      'runpod/base:0.6.2-cuda12.2.0',
      'nvcr.io/nvidia/rapidsai/notebooks:24.06-cuda12.2-py3.11',
    ],
    ports: NOTEBOOK_PORTS,
    env: [{ JUPYTER_PASSWORD: 'changeme' }, {}],
  },
  {
    weight: 4,
    names: ['tensorflow gpu notebook', 'keras training', 'tensorrt builder'],
    images: ['tensorflow/tensorflow:2.15.0-gpu-jupyter', 'nvcr.io/nvidia/tensorrt:24.05-py3'],
    ports: NOTEBOOK_PORTS,
    env: [{}],
  },
  {
    weight: 7,
    names: ['dev box', 'ssh server', 'blender render node', 'kohya ss', 'cuda base', 'unreal pixel streaming'],
    images: ['nvidia/cuda:12.1.1-devel-ubuntu22.04', 'ubuntu:22.04', 'linuxserver/blender:4.1.1', 'docker.io/{owner}/devbox:latest'],
    ports: [['22/tcp'], ['3000/http', '22/tcp']],
    env: [{}, { PUBLIC_KEY: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB' }],
  },
];
const WEIGHTS = FAMILIES.reduce((sum, f) => sum + f.weight, 0);

const AMD = {
  names: ['rocm pytorch', 'rocm vllm', 'mi300x llama 70b', 'rocm dev box', 'rocm comfyui'],
  images: [
    'rocm/pytorch:rocm6.1_ubuntu22.04_py3.10_pytorch_2.1.2',
    'rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4',
    'rocm/dev-ubuntu-22.04:6.1',
  ],
};
const CPU = {
  names: ['cpu api server', 'redis', 'postgres sidecar', 'n8n automations', 'static site', 'python worker'],
  images: ['python:3.11-slim', 'redis:7.2-alpine', 'postgres:16', 'n8nio/n8n:1.48.0', 'nginx:1.27', 'docker.io/{owner}/worker:cpu'],
};
const VARIANTS = ['', '', '', ' v2', ' (fork)', ' - fast', ' latest', ' test', ' prod', ' 2024'];
const README = [
  '',
  '# Usage\n\nConnect to port 8888 for Jupyter. Models are cached in /workspace.',
  '## Quick start\n\n1. Deploy\n2. Open the HTTP port\n3. Enjoy\n\nIssues: open one on GitHub.',
  'Runs the latest release. Set MODEL_NAME to choose the model; the first start downloads it (a few minutes).',
];

/** Where the `total` rows' rare rows are: RARE_ROWS of them, spread over the range. */
const rareStep = (total: number) => Math.max(1, Math.floor(total / RARE_ROWS));
export const isRare = (n: number, total: number) =>
  n % rareStep(total) === Math.floor(rareStep(total) / 2) && n < rareStep(total) * RARE_ROWS;

const BASE_TIME = Date.parse('2026-01-01T00:00:00.000Z');

/** Row `n` of a catalogue of `total` templates (ids `cat` + n, newest last), as the service would hold it. */
export function catalogueTemplate(n: number, total: number): TemplateRecord {
  const r = draws(n);
  const rare = isRare(n, total);
  const platform = !rare && r() < 0.03;
  const c = r();
  const category: Category = c < 0.85 ? 'NVIDIA' : c < 0.95 ? 'AMD' : 'CPU';
  const isServerless = r() < 0.2;
  const isPublic = rare || (platform ? r() < 0.9 : r() < 0.28);
  const owner = platform ? pick(r, PLATFORM_OWNERS) : { id: ownerId(Math.floor(ownersOf(total) * r() ** 2)), name: '' };
  const ownerHandle = platform ? owner.name : ownerName(Number(owner.id.slice(1)));
  let family = FAMILIES[0] as Family;
  for (let w = r() * WEIGHTS, i = 0; i < FAMILIES.length; w -= (FAMILIES[i] as Family).weight, i++) {
    family = FAMILIES[i] as Family;
    if (w < family.weight) break;
  }
  const [names, images] =
    category === 'AMD'
      ? [AMD.names, AMD.images]
      : category === 'CPU'
        ? [CPU.names, CPU.images]
        : [family.names, isServerless && family.serverlessImages ? family.serverlessImages : family.images];
  const name = `${rare ? `${TERMS.rare} ` : ''}${pick(r, names)}${pick(r, VARIANTS)} ${n}`;
  const at = new Date(BASE_TIME + n * 30_000).toISOString();
  const runtime = isPublic ? Math.floor(r() ** 6 * 2_000_000) : 0;
  return {
    id: `cat${String(n).padStart(13, '0')}`,
    ownerId: owner.id,
    endpointId: null,
    name,
    imageName: pick(r, images).replace('{owner}', ownerHandle.replace(/[^a-z0-9-]/g, '')),
    category,
    containerDiskInGb: pick(r, [5, 10, 20, 50, 100, 200]),
    volumeInGb: isServerless ? 0 : pick(r, [0, 20, 50, 100, 500]),
    volumeMountPath: isServerless ? '/runpod-volume' : '/workspace',
    containerRegistryAuthId: '',
    dockerEntrypoint: [],
    dockerStartCmd: r() < 0.15 ? ['bash', '-c', 'python -u handler.py'] : [],
    env: pick(r, family.env),
    ports: isServerless ? [] : pick(r, family.ports),
    readme: pick(r, README),
    isPublic,
    isPlatform: platform,
    isServerless,
    earned: Math.round(runtime * 0.2) / 100,
    runtimeInMin: runtime,
    revision: 1,
    createdAt: at,
    updatedAt: at,
    // The bench's servers run with IMAGE_CHECK=off: no registry is asked.
    imageCheck: { status: 'off', checkedAt: null, digest: null, platforms: [], sizeBytes: null, cudaVersion: null, reason: null },
  };
}
