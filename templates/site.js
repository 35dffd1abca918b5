// benchbook site: sort a table by a header click, filter its rows by text.
// Our own script, inline and pinned by its hash in the page's CSP; the page
// reads whole without it.
(function () {
  document.querySelectorAll('main table').forEach(function (table, n) {
    var body = table.tBodies[0];
    if (!body || body.rows.length < 2) return;
    var input = document.createElement('input');
    input.className = 'filter';
    input.type = 'search';
    input.placeholder = 'Filter these ' + body.rows.length + ' rows';
    input.setAttribute('aria-label', 'Filter the table below');
    table.parentNode.insertBefore(input, table);
    input.addEventListener('input', function () {
      var q = input.value.toLowerCase();
      Array.prototype.forEach.call(body.rows, function (r) {
        r.hidden = q !== '' && r.textContent.toLowerCase().indexOf(q) < 0;
      });
    });
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, col) {
      th.classList.add('sortable');
      th.title = 'Sort by this column';
      th.addEventListener('click', function () {
        var down = th.getAttribute('aria-sort') === 'ascending';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', down ? 'descending' : 'ascending');
        var key = function (r) {
          var t = r.cells[col] ? r.cells[col].textContent.trim() : '';
          var x = parseFloat(t.replace(/,/g, ''));
          return isNaN(x) ? t.toLowerCase() : x;
        };
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a), y = key(b);
          var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === 'number' ? -1 : 1);
          return down ? -c : c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
})();
