package io.estuary.cli;

import static org.junit.jupiter.api.Assertions.*;

import io.estuary.server.admin.AdminViews;
import io.estuary.server.admin.ViewsDoc;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/**
 * docs/rest-api.md lists every admin view as declared; with {@code -Destuary.views.doc.write=true} this test writes
 * the list instead of checking it.
 */
class ViewsDocTest {
    @Test
    void restApiDocListsTheDeclaredViews() throws Exception {
        String views = ViewsDoc.render(AdminViews.class, CliViews.class);
        assertTrue(
                views.contains("| `AdminViews.WorkerStatus` | {`address`: WorkerAddress, `version`: string,"), views);
        assertTrue(views.contains("`workersByState`: {string: number}"), views);
        Path file = Paths.get("..", "docs", "rest-api.md");
        String doc = new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
        int begin = doc.indexOf(ViewsDoc.BEGIN);
        int end = doc.indexOf(ViewsDoc.END);
        assertTrue(begin >= 0 && end > begin, "docs/rest-api.md has no views markers");
        String current = doc.substring(begin, end + ViewsDoc.END.length());
        if (Boolean.getBoolean("estuary.views.doc.write")) {
            Files.write(file, doc.replace(current, views).getBytes(StandardCharsets.UTF_8));
            return;
        }
        assertEquals(
                views,
                current,
                "docs/rest-api.md's list of views differs from AdminViews/CliViews: run " + "build/gen-views-docs.sh");
    }
}
