// What every page of the admin port does: times said in the reader's locale and zone, and the menu.

// ---- times: <time datetime> elements, rendered in UTC by the server, said as the reader reads them ---------------
;(() => {
  const sameDay = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' })
  const otherDay = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })
  const exact = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' })
  /** Today's times by the clock alone, others with their date; the exact moment on hover. */
  window.showTime = (el) => {
    const at = new Date(el.getAttribute('datetime'))
    if (Number.isNaN(at.getTime())) return
    el.textContent = (at.toDateString() === new Date().toDateString() ? sameDay : otherDay).format(at)
    el.title = exact.format(at)
  }
  for (const el of document.querySelectorAll('time[datetime]')) window.showTime(el)
  // Fragments htmx swaps in carry times too.
  document.addEventListener('htmx:after:swap', (event) => {
    for (const el of event.target?.querySelectorAll?.('time[datetime]') ?? []) window.showTime(el)
  })
})()

// ---- the menu. On narrow screens the Menu button shows and hides it (without this script it simply stays
// open). Its groups open one at a time and close on a click elsewhere or on Esc, which gives focus back to the group.
;(() => {
  document.documentElement.classList.add('js')
  const top = document.querySelector('header.top')
  const toggle = document.getElementById('menu-toggle')
  toggle?.addEventListener('click', () => {
    const open = top.classList.toggle('open')
    toggle.setAttribute('aria-expanded', String(open))
  })
  const groups = [...document.querySelectorAll('.nav-group')]
  for (const group of groups) {
    group.addEventListener('toggle', () => {
      if (group.open) for (const other of groups) if (other !== group) other.open = false
    })
  }
  document.addEventListener('click', (event) => {
    for (const group of groups) if (group.open && !group.contains(event.target)) group.open = false
  })
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return
    const open = groups.find((group) => group.open)
    if (!open) return
    open.open = false
    open.querySelector('summary').focus()
    event.preventDefault()
  })
})()
