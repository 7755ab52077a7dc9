// Drives Perfetto's own UI (built from its sources: scripts/perfetto-ui.sh) in
// Debian's chromium over one trace that trace_processor_shell --httpd serves,
// and writes what a user sees: screenshots and the tracks as the UI orders
// them. Usage (the script runs it): node perfetto-ui.cjs OUTDIR NAME INFO.json
//   INFO: {"launch": slice id to select, "area": [start, end] ns} (from trace processor)
// Writes OUTDIR/NAME-timeline.png, -launch.png, -area.png (-samples.png: the CPU samples'
// flame graph over the area, where the trace has them) and NAME-ui.json.
'use strict';
const fs = require('fs');
const { chromium } = require(process.env.PLAYWRIGHT_CORE);
const [outdir, name, infoPath] = process.argv.slice(2);
const info = JSON.parse(fs.readFileSync(infoPath, 'utf8'));

async function idle(page, ms) {
  // gives up on a trace that keeps it busy: the screenshot is taken anyway
  await page.evaluate((t) => window.waitForPerfettoIdle(t), ms || 15000).catch(() => {});
}

async function errorDialog(page) {
  return page.evaluate(() => {
    const m = Array.from(document.querySelectorAll('.pf-modal, .modal-dialog, [role=dialog]'));
    const t = m.map((e) => e.innerText).join('\n');
    return /Oops|error/i.test(t) ? t.slice(0, 2000) : '';
  });
}

async function main() {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const t0 = Date.now();
  await page.goto('http://127.0.0.1:10000/?testing=1');
  await page.getByRole('button', { name: 'YES, use loaded trace' }).first().click({ timeout: 120000 });
  await page.waitForFunction(() => window.app && window.app.trace, null, { timeout: 600000 });
  const loadMs = Date.now() - t0;    // the trace loaded: the timeline can be drawn
  await idle(page, 30000);
  // every group open but cltrace's own (folded, as a user first sees it)
  await page.evaluate(async () => {
    await window.app.commands.runCommand('dev.perfetto.ExpandAllGroups');
    for (const n of window.app.trace.currentWorkspace.flatTracks)
      if (n.name.startsWith('cltrace:')) n.collapse();
  });
  await idle(page);
  await page.screenshot({ path: `${outdir}/${name}-timeline.png` });
  const tracks = await page.evaluate(() => window.app.trace.currentWorkspace.flatTracksOrdered.map((n) => ({
    name: n.name, depth: n.fullPath.length - 1, group: n.children.length > 0, expanded: n.expanded,
  })));
  let details = '';
  if (info.launch !== undefined && info.launch !== null) {
    await page.evaluate((id) => window.app.trace.selection.selectSqlEvent('slice', id,
      { scrollToSelection: true, switchToCurrentSelectionTab: true }), info.launch);
    await idle(page);
    await page.screenshot({ path: `${outdir}/${name}-launch.png` });
    details = await page.evaluate(() => Array.from(document.querySelectorAll('section.pf-details-shell'))
      .map((e) => e.innerText).join('\n'));
  }
  if (info.area) {
    await page.evaluate((a) => {
      const uris = window.app.trace.currentWorkspace.flatTracks.filter((n) => n.uri).map((n) => n.uri);
      window.app.trace.selection.selectArea({ start: BigInt(a[0]), end: BigInt(a[1]), trackUris: uris });
    }, info.area);
    await idle(page);
    await page.screenshot({ path: `${outdir}/${name}-area.png` });
    // a trace with CPU samples: their flame graph over the area
    const tab = page.getByText('Perf Sample Flamegraph', { exact: true });
    if (await tab.count()) {
      await tab.first().click();
      await idle(page);
      await page.screenshot({ path: `${outdir}/${name}-samples.png` });
    }
  }
  const dialog = await errorDialog(page);
  fs.writeFileSync(`${outdir}/${name}-ui.json`, JSON.stringify({
    trace: info.trace, load_ms: loadMs, error_dialog: dialog, page_errors: errors,
    engine: await page.evaluate(() => window.app.trace.engine.mode), tracks,
    selected_details: details, counts: info.counts,
  }, null, 1));
  await browser.close();
  console.log(`${name}: ${tracks.length} tracks, loaded in ${(loadMs / 1000).toFixed(1)} s` +
              `${dialog ? ', ERROR DIALOG' : ''}`);
  process.exit(dialog ? 1 : 0);
}
main().catch((e) => { console.error(`${name}: ${e}`); process.exit(2); });
