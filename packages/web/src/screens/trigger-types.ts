// Pipeline triggers as the API answers them (docs/triggers.md).

export type Occurrence = {
  nominal_at: string;
  fire_at: string;
  outcome: string;
  reason: string | null;
  run_slug: string | null;
};
export type Schedule = {
  cron: string;
  time_zone: string;
  overlap: 'skip' | 'buffer_one' | 'allow';
  catch_up: { policy: 'latest' | 'skip' | 'all'; window_seconds: number; max_runs: number };
  jitter_seconds: number;
  start_at: string | null;
  end_at: string | null;
};
export type Secret = {
  id: string;
  prefix: string;
  created_at: string;
  expires_at: string | null;
  last_verified_at: string | null;
};
export type Trigger = {
  slug: string;
  name: string;
  kind: 'schedule' | 'webhook';
  pipeline_slug: string;
  environment_slug: string;
  enabled: boolean;
  paused: boolean;
  pause_note: string | null;
  description: string | null;
  schedule: Schedule | null;
  webhook: { delivery_path: string; secrets: Secret[]; input_mapping: Record<string, string> } | null;
  last_occurrence: Occurrence | null;
  next_fire_times: string[];
  created_at: string;
  updated_at: string;
  secret?: string;
};
export type Preview = {
  time_zone: string | null;
  tz_version: string;
  next_fire_times: { nominal_at: string; fire_at: string; local_time: string; dst: string }[];
};
