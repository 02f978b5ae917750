package raglab.reference;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.BoostQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.util.Version;

/**
 * Real Lucene as the oracle of raglab.text.lucene: EnglishAnalyzer's tokens for sample strings and
 * Cranfield documents, and a BM25 run of Cranfield's 225 queries.
 *
 * <p>Usage: {@code LuceneReference CRANFIELD_DIR SAMPLES_TXT OUT_DIR [CONTENTS]}. CONTENTS is
 * {@code title+abstract} (default: the title, a line break, and the .W abstract without the copy
 * of the title it opens with) or {@code title+w} (the title, then .W as it stands, so the title
 * counts twice). Writes OUT_DIR/cranfield-bm25-1000.run (top 1000), OUT_DIR/cranfield-bm25.run
 * (top 100) and OUT_DIR/analyzer-tokens.json.
 */
public final class LuceneReference {
  private static final Pattern ID_LINE = Pattern.compile("\\.I(?:[ \\t]+(\\S*))?");
  private static final Pattern FIELD_LINE = Pattern.compile("\\.([A-Z])");
  private static final String FIELD = "contents";
  private static final int FIXTURE_DOCS = 200;

  private LuceneReference() {}

  /** One Glasgow record: its number and fields (a repeated marker keeps its text in the field). */
  record GlasgowRecord(int number, Map<String, String> fields) {
    String text(String letter) {
      return fields.getOrDefault(letter, "");
    }
  }

  static List<GlasgowRecord> parse(Path path) throws IOException {
    List<GlasgowRecord> records = new ArrayList<>();
    Map<String, List<String>> fields = null;
    String current = null;
    int number = -1;
    for (String raw : Files.readAllLines(path, StandardCharsets.UTF_8)) {
      String line = raw.stripTrailing();
      Matcher id = ID_LINE.matcher(line);
      if (id.matches()) {
        if (fields != null) records.add(close(number, fields));
        number = Integer.parseInt(id.group(1));
        fields = new LinkedHashMap<>();
        current = null;
        continue;
      }
      Matcher marker = FIELD_LINE.matcher(line);
      if (fields != null && marker.matches()) {
        if (!fields.containsKey(marker.group(1)) || current == null) {
          current = marker.group(1);
          fields.put(current, new ArrayList<>());
        }
        continue;
      }
      if (fields != null && current != null) fields.get(current).add(line);
    }
    if (fields != null) records.add(close(number, fields));
    return records;
  }

  private static GlasgowRecord close(int number, Map<String, List<String>> fields) {
    Map<String, String> text = new LinkedHashMap<>();
    fields.forEach((k, v) -> text.put(k, String.join("\n", v).strip()));
    return new GlasgowRecord(number, text);
  }

  static String normalise(String text) {
    return String.join(" ", text.strip().split("\\s+"));
  }

  /** The .W abstract without the copy of the title that opens it (whitespace and case aside). */
  static String abstractOf(GlasgowRecord doc) {
    String title = normalise(doc.text("T"));
    String body = doc.text("W");
    if (title.isEmpty()) return body;
    String[] words = body.strip().split("\\s+");
    int want = title.split(" ").length;
    if (words.length >= want
        && String.join(" ", java.util.Arrays.copyOf(words, want)).equalsIgnoreCase(title)) {
      return String.join(" ", java.util.Arrays.copyOfRange(words, want, words.length));
    }
    return body;
  }

  static List<String> analyze(Analyzer analyzer, String text) throws IOException {
    List<String> out = new ArrayList<>();
    try (TokenStream ts = analyzer.tokenStream(FIELD, new StringReader(text))) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) out.add(term.toString());
      ts.end();
    }
    return out;
  }

  static String json(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  static String jsonList(List<String> items) {
    List<String> quoted = new ArrayList<>();
    for (String item : items) quoted.add(json(item));
    return "[" + String.join(", ", quoted) + "]";
  }

  public static void main(String[] args) throws IOException {
    Path cranfield = Path.of(args[0]);
    Path samples = Path.of(args[1]);
    Path out = Path.of(args[2]);
    String contents = args.length > 3 ? args[3] : "title+abstract";
    if (!contents.equals("title+abstract") && !contents.equals("title+w")) {
      throw new IllegalArgumentException("CONTENTS must be title+abstract or title+w");
    }
    Files.createDirectories(out);
    // Anserini's default analyzer: EnglishAnalyzer's chain with the original Porter stemmer.
    Analyzer analyzer = new EnglishAnalyzer();
    List<GlasgowRecord> docs = parse(cranfield.resolve("cran.all.1400"));
    List<GlasgowRecord> queries = parse(cranfield.resolve("cran.qry"));

    try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("analyzer-tokens.json")))) {
      w.println("{");
      w.println("  \"lucene_version\": " + json(Version.LATEST.toString()) + ",");
      w.println("  \"analyzer\": \"org.apache.lucene.analysis.en.EnglishAnalyzer()\",");
      w.println("  \"samples\": [");
      List<String> lines = Files.readAllLines(samples, StandardCharsets.UTF_8);
      List<String> rows = new ArrayList<>();
      for (String line : lines) {
        if (line.isEmpty() || line.startsWith("#")) continue;
        String text = line.replace("\\n", "\n").replace("\\t", "\t");
        rows.add("    {\"text\": " + json(text) + ", \"tokens\": " + jsonList(analyze(analyzer, text)) + "}");
      }
      w.println(String.join(",\n", rows));
      w.println("  ],");
      w.println("  \"cranfield_text\": \"title, a line break, then the .W field as it stands\",");
      w.println("  \"cranfield\": [");
      rows.clear();
      for (GlasgowRecord d : docs.subList(0, FIXTURE_DOCS)) {
        String text = d.text("T") + "\n" + d.text("W");
        rows.add("    {\"id\": \"" + d.number() + "\", \"tokens\": " + jsonList(analyze(analyzer, text)) + "}");
      }
      w.println(String.join(",\n", rows));
      w.println("  ]");
      w.println("}");
    }

    ByteBuffersDirectory dir = new ByteBuffersDirectory();
    BM25Similarity similarity = new BM25Similarity(1.2f, 0.75f);
    IndexWriterConfig config = new IndexWriterConfig(analyzer).setSimilarity(similarity);
    try (IndexWriter writer = new IndexWriter(dir, config)) {
      for (GlasgowRecord d : docs) {
        String body = contents.equals("title+w") ? d.text("W") : abstractOf(d);
        Document doc = new Document();
        doc.add(new StringField("id", Integer.toString(d.number()), Field.Store.YES));
        doc.add(new TextField(FIELD, d.text("T") + "\n" + body, Field.Store.NO));
        writer.addDocument(doc);
      }
      writer.forceMerge(1);
    }
    try (DirectoryReader reader = DirectoryReader.open(dir);
        PrintWriter full = new PrintWriter(Files.newBufferedWriter(out.resolve("cranfield-bm25-1000.run")));
        PrintWriter top = new PrintWriter(Files.newBufferedWriter(out.resolve("cranfield-bm25.run")))) {
      IndexSearcher searcher = new IndexSearcher(reader);
      searcher.setSimilarity(similarity);
      for (int position = 1; position <= queries.size(); position++) {
        // Anserini's BagOfWordsQueryGenerator: one SHOULD clause per distinct term, boosted by
        // the term's count in the query.
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (String t : analyze(analyzer, queries.get(position - 1).text("W"))) counts.merge(t, 1, Integer::sum);
        BooleanQuery.Builder builder = new BooleanQuery.Builder();
        counts.forEach((t, n) -> builder.add(
            new BoostQuery(new TermQuery(new Term(FIELD, t)), n), BooleanClause.Occur.SHOULD));
        TopDocs hits = searcher.search(builder.build(), 1000);
        int rank = 0;
        for (ScoreDoc hit : hits.scoreDocs) {
          rank++;
          String docid = reader.document(hit.doc).get("id");
          String row = String.format("%d Q0 %s %d %.6f lucene-bm25", position, docid, rank, hit.score);
          full.println(row);
          if (rank <= 100) top.println(row);
        }
      }
    }
    System.out.println("Lucene " + Version.LATEST + ": wrote " + out.toAbsolutePath());
  }
}
