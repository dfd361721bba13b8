// Draws each usage chart from the figures its page carries (a JSON block beside the canvas), with Chart.js.
;(() => {
  const draw = () => {
    if (typeof Chart === 'undefined') return
    for (const figure of document.querySelectorAll('figure[data-chart]')) {
      const canvas = figure.querySelector('canvas')
      const source = figure.querySelector('script.chart-data')
      if (!canvas || !source || canvas.dataset.drawn) continue
      const data = JSON.parse(source.textContent)
      canvas.dataset.drawn = 'true'
      const colour = getComputedStyle(figure).getPropertyValue('--chart-colour').trim() || '#2f6fb3'
      new Chart(canvas, {
        type: 'bar',
        data: { labels: data.labels, datasets: [{ label: 'Cost (USD)', data: data.values, backgroundColor: colour }] },
        options: {
          animation: false,
          maintainAspectRatio: false,
          // Bars lie along a list (agents, people); columns stand along time.
          indexAxis: data.kind === 'bars' ? 'y' : 'x',
          plugins: { legend: { display: false } },
          scales: { [data.kind === 'bars' ? 'x' : 'y']: { beginAtZero: true, title: { display: true, text: 'USD' } } },
        },
      })
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', draw)
  else draw()
})()
