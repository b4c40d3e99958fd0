// The portal's one script: progressive enhancement only; every page works without it.
// Copy buttons: <button data-copy="ID"> copies the text of the element with that id.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(() => {
    const label = button.textContent;
    button.textContent = button.getAttribute('data-copied') || 'Copied';
    setTimeout(() => (button.textContent = label), 2000);
  });
});
// Copy buttons are hidden until this script can make them work.
for (const b of document.querySelectorAll('button[data-copy][hidden]')) b.hidden = false;
