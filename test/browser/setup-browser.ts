import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { aptInstallSync } from '../support/apt';

// The browser suite drives Debian's chromium through playwright-core: no browser is ever
// downloaded. This setup installs the package when it is missing (CI runs as root) and builds the
// app when packages/web/dist is absent (npm install normally built it already).
export const CHROMIUM = '/usr/bin/chromium';

export default function setup() {
  aptInstallSync(['chromium'], [CHROMIUM]);
  const root = path.resolve(import.meta.dirname, '../..');
  if (!fs.existsSync(path.join(root, 'packages/web/dist/index.html'))) {
    execSync('npm run build -w @sluice/web', { cwd: root, stdio: 'inherit' });
  }
}
