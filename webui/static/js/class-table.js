// The job page's Class view: sorted by any column, a click on its header (again: the other way).

const table = document.getElementById("class-table");

function compare(key, a, b) {
  const x = a.dataset[key] ?? "";
  const y = b.dataset[key] ?? "";
  const numbers = x !== "" && y !== "" && !Number.isNaN(Number(x)) && !Number.isNaN(Number(y));
  return numbers ? Number(x) - Number(y) : x.localeCompare(y);
}

if (table) {
  for (const button of table.querySelectorAll("button.sort")) {
    button.addEventListener("click", () => {
      const header = button.closest("th");
      const ascending = header.getAttribute("aria-sort") !== "ascending";
      for (const th of table.querySelectorAll("th")) th.setAttribute("aria-sort", "none");
      header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const body = table.tBodies[0];
      const rows = [...body.rows].sort((a, b) => compare(button.dataset.key, a, b) * (ascending ? 1 : -1));
      body.append(...rows);
    });
  }
}
