package io.estuary.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/** A plain-text table: a header row and rows of cells, printed with columns padded to their widest cell. Not thread-safe. */
final class Table {
    private final List<String[]> rows = new ArrayList<>();
    private final int columns;

    Table(String... header) {
        this.columns = header.length;
        rows.add(header);
    }

    Table row(Object... cells) {
        String[] r = new String[columns];
        for (int i = 0; i < columns; i++) r[i] = i < cells.length && cells[i] != null ? String.valueOf(cells[i]) : "";
        rows.add(r);
        return this;
    }

    void print(PrintStream out) {
        int[] width = new int[columns];
        for (String[] r : rows) for (int i = 0; i < columns; i++) width[i] = Math.max(width[i], r[i].length());
        for (String[] r : rows) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < columns; i++) {
                sb.append(r[i]);
                if (i < columns - 1) sb.append(" ".repeat(width[i] - r[i].length() + 2));
            }
            out.println(sb.toString().stripTrailing());
        }
    }
}
