// The console's menu. On narrow screens the Menu button shows and hides it (without this script it simply stays
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
