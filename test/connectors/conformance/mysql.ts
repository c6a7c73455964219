import { randomBytes } from 'node:crypto';
import mysqlDriver from 'mysql2/promise';
import { type ConformanceFixture, sqlReach } from './fixture';

// MySQL/MariaDB: the test server (SLUICE_TEST_MYSQL_HOST/PORT), a throwaway database and user.

const HOST = process.env.SLUICE_TEST_MYSQL_HOST ?? '127.0.0.1';
const PORT = Number(process.env.SLUICE_TEST_MYSQL_PORT ?? 3306);

export const mysqlFixture: ConformanceFixture = {
  at: (t) => sqlReach('mysql', t, 'sluice', 'sluice', 'unused'),
  silentTimeoutSeconds: 1,
  sinkOperation: { operation_type: 'sql', write: { table: 'conformance_people', mode: 'insert' } },
  async live() {
    const suffix = randomBytes(4).toString('hex');
    const db = `sluice_cf_${suffix}`;
    const user = `sluice_cf_${suffix}`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const admin = await mysqlDriver.createConnection({ host: HOST, port: PORT, user: 'root' });
    await admin.query(`CREATE DATABASE ${db}`);
    await admin.query(`CREATE USER '${user}'@'127.0.0.1' IDENTIFIED BY '${password}'`);
    await admin.query(`GRANT ALL ON ${db}.* TO '${user}'@'127.0.0.1'`);
    await admin.query(`CREATE TABLE ${db}.conformance_people (id int, name varchar(100))`);
    const at = { host: HOST, port: PORT, allowPrivate: true };
    return {
      good: sqlReach('mysql', at, db, user, password),
      badCredentials: sqlReach('mysql', at, db, user, `wrong-${randomBytes(6).toString('hex')}`),
      roundTrip: { name: 'conformance_people', fields: ['id', 'name'], throughSink: true },
      countRows: async () => {
        const [rows] = await admin.query(`SELECT count(*) AS n FROM ${db}.conformance_people`);
        return Number((rows as { n: number }[])[0].n);
      },
      close: async () => {
        await admin.query(`DROP DATABASE IF EXISTS ${db}`);
        await admin.query(`DROP USER IF EXISTS '${user}'@'127.0.0.1'`);
        await admin.end();
      },
    };
  },
};
