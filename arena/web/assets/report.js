// Lays out the league report from its embedded data: tables by hand, charts with plotly.js.
// Every number arrives computed (arena/web/report.py); nothing here is a statistic.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const fixed = (x) => x.toFixed(3);
  const signed = (x) => (x > 0 ? '+' : '') + x.toFixed(3);
  const TOO_FEW = 'too few tables'; // arena.league.standings.TOO_FEW

  function cell(row, text, name) {
    const td = document.createElement('td');
    td.textContent = text;
    if (name) td.className = name;
    row.appendChild(td);
    return td;
  }

  function header() {
    const marked = data.caution ? data.caution.toUpperCase() + ': ' : '';
    document.getElementById('title').textContent = marked + 'League report';
    if (data.caution) {
      const caution = document.getElementById('caution');
      caution.hidden = false;
      const why = {
        unchecked: 'the logs were not verified against the rules (arena check)',
        partial: 'logs without a result line are included, listed but not ranked',
      };
      caution.textContent = data.caution.split('+').map((mark) => mark.toUpperCase() + ': ' +
        why[mark]).join('; ');
    }
    const league = data.league;
    const parts = ['source: ' + data.source, (league.mode || '') + ' mode',
      league.episodesStored + ' episodes ranked'];
    if (league.tables) parts.push(league.tables + ' tables of ' + league.deals + ' deals');
    if (league.unranked && league.unranked.length) {
      parts.push('not ranked (no result line): ' + league.unranked.join(', '));
    }
    document.getElementById('summary').textContent = parts.join(' · ');
  }

  function standings() {
    document.getElementById('standings-caption').textContent = data.means +
      ', with its 95% interval over tables';
    const body = document.querySelector('#standings-table tbody');
    data.standings.forEach((s, i) => {
      const row = document.createElement('tr');
      row.dataset.entrant = s.entrant;
      cell(row, String(i + 1));
      cell(row, s.entrant, 'name');
      cell(row, String(s.episodes), 'episodes');
      cell(row, fixed(s.meanScore), 'mean');
      cell(row, fixed(s.ci95[0]), 'low');
      const high = cell(row, fixed(s.ci95[1]), 'high');
      if (s.ciCoverage === TOO_FEW) high.classList.add('too-few');
      cell(row, data.intervalMethods[s.ciMethod], 'method');
      cell(row, s.rating.toFixed(1), 'rating');
      cell(row, (s.points > 0 ? '+' : '') + s.points, 'points');
      body.appendChild(row);
    });
    if (data.ciNote) {
      const note = document.getElementById('ci-coverage');
      note.hidden = false;
      note.textContent = data.ciNote;
    }
  }

  function flags() {
    const list = document.getElementById('flags');
    if (!data.flags.length) {
      const li = document.createElement('li');
      li.className = 'empty';
      li.textContent = 'no flags';
      list.appendChild(li);
    }
    for (const flag of data.flags) {
      const li = document.createElement('li');
      li.className = 'flag';
      li.dataset.kind = flag.flag;
      li.dataset.pair = flag.policies.join('|');
      li.textContent = flag.flag + ': ' + flag.policies.join(' → ') + ', bias ' +
        flag.bias.map(signed).join(' / ') + ' over ' + flag.faced.join(' / ') +
        ' facings (bar ' + flag.threshold + ')';
      list.appendChild(li);
    }
    const power = data.power;
    if (power) {
      document.getElementById('power').textContent = 'Evidence: ' + power.episodes +
        ' episodes, ' + power.decisions + ' decisions, ' + power.pairsFaced + ' of ' +
        power.pairs + ' pairs faced, median ' + power.facingsMedian + ' facings (a flag needs ' +
        power.minFacings + ').';
    }
  }

  // A cost as shown: calls no price covers (a server you run) are 'unpriced', never $0.
  // Wholly unpriced dollars are null, as are a list of logs' (a log names no price).
  function dollars(part) {
    if (part.unpriced) return part.usd === null ? 'unpriced' : `${part.usd.toFixed(4)} + unpriced`;
    if (part.usd === null) return 'n/a (logs name no price)';
    return part.usd.toFixed(4);
  }

  function cost() {
    const kinds = ['input', 'output', 'cacheRead', 'cacheWrite', 'total'];
    const head = document.querySelector('#cost-table thead');
    const top = document.createElement('tr');
    for (const title of ['entrant', ...kinds, 'usd']) {
      const th = document.createElement('th');
      th.textContent = title;
      top.appendChild(th);
    }
    head.appendChild(top);
    const body = document.querySelector('#cost-table tbody');
    const rows = [...Object.entries(data.cost.byEntrant), ['all', data.cost]];
    for (const [name, part] of rows) {
      const row = document.createElement('tr');
      cell(row, name, 'name');
      for (const kind of kinds) cell(row, part.tokens[kind].toLocaleString('en'));
      cell(row, dollars(part));
      body.appendChild(row);
    }
  }

  function episodes() {
    const body = document.querySelector('#episodes-table tbody');
    for (const episode of data.episodes) {
      const row = document.createElement('tr');
      cell(row, episode.label);
      cell(row, String(episode.table));
      cell(row, episode.entrants.map((name, slot) => {
        const p = episode.points[slot];
        return name + ' (' + (p > 0 ? '+' : '') + p + ')';
      }).join(', '));
      const link = cell(row, '');
      if (episode.replay) {
        const a = document.createElement('a');
        a.href = episode.replay;
        a.className = 'replay';
        a.textContent = 'replay';
        link.appendChild(a);
      } else {
        link.textContent = 'no log';
      }
      body.appendChild(row);
    }
  }

  function charts() {
    for (const [id, figure] of Object.entries(data.figures)) {
      const target = document.getElementById(id);
      if (!figure) {
        target.className = 'empty';
        target.textContent = id === 'tokens-plot' ? 'no model calls in these episodes'
          : 'nothing to draw';
        continue;
      }
      Plotly.newPlot(target, figure.data, figure.layout,
        { displaylogo: false, responsive: true });
    }
  }

  header();
  standings();
  flags();
  cost();
  episodes();
  charts();
  document.body.dataset.ready = 'true';
})();
