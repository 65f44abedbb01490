// SPDX-License-Identifier: Apache-2.0
// The Mermaid fixers of mineru-vl-utils 1.2.1 (post_process/mermaid_*.py and
// extract_and_validate_mermaid_strict): TV-18 ... TV-22, the repetition vectors, each issue
// kind, the fixers' edge cases, and hostile input.
#include "pipeline/mermaid_fixes.h"

#include <gtest/gtest.h>

#include <ctime>
#include <ostream>
#include <string>
#include <vector>

namespace mineru::pipeline {

// Readable failure messages (found by argument-dependent lookup).
void PrintTo(const MermaidIssue& issue, std::ostream* os) {
  *os << "{" << issue.subject << ", " << issue.kind << ", " << issue.count << "}";
}

namespace {

using Issues = std::vector<MermaidIssue>;

std::string Repeat(std::string_view unit, size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += unit;
  return s;
}

// ---------------------------------------------------------------------------------------------
// Strict extraction.

TEST(MermaidStrictTest, Tv18) {
  EXPECT_EQ(ExtractMermaidStrict("```mermaid\ngrap TD\n    A[formula] -> B[Formula Refiner "
                                 "(自带Unify效果)]\n    B - -> C[say \"hi\"]\n```"),
            "```mermaid\ngraph TD\n    A[\"formula\"] --> B[\"Formula Refiner (自带Unify效果)\"]\n"
            "    B --> C[\"say &quot;hi&quot;\"]\n```");
}

TEST(MermaidStrictTest, CodeBlocks) {
  EXPECT_EQ(ExtractMermaidStrict("  \n "), "");
  EXPECT_EQ(ExtractMermaidStrict(""), "");
  EXPECT_EQ(ExtractMermaidStrict("graph TD\n A -> B"), "```mermaid\ngraph TD\n A --> B\n```");
  EXPECT_EQ(ExtractMermaidStrict("text ```\nflowchart LR\nA-->B\n``` tail"),
            "```mermaid\nflowchart LR\nA-->B\n```");
  EXPECT_EQ(ExtractMermaidStrict("```mermaid graph TD\nA[x]```"),
            "```mermaid\ngraph TD\nA[\"x\"]\n```");
  EXPECT_EQ(ExtractMermaidStrict("```\n```"), "```mermaid\n\n```");
  // An unclosed fence is part of the code.
  EXPECT_EQ(ExtractMermaidStrict("```mermaid\nA"), "```mermaid\n```mermaid\nA\n```");
}

TEST(MermaidStrictTest, Declarations) {
  EXPECT_EQ(ExtractMermaidStrict("  mermaid\nFLOWCHAR TD\n  a[b]"),
            "```mermaid\nflowchart TD\n  a[\"b\"]\n```");
  // \b: no correction before a word character (ASCII or not).
  EXPECT_EQ(ExtractMermaidStrict("grap_x\nA[x]"), "```mermaid\ngrap_x\nA[\"x\"]\n```");
  EXPECT_EQ(ExtractMermaidStrict("grapé\nA"), "```mermaid\ngrapé\nA\n```");
  EXPECT_EQ(ExtractMermaidStrict("GrapG LR"), "```mermaid\ngraph LR\n```");
  EXPECT_EQ(ExtractMermaidStrict("flowchartt"), "```mermaid\nflowchart\n```");
}

TEST(MermaidStrictTest, Arrows) {
  EXPECT_EQ(
      ExtractMermaidStrict("graphh LR\n A <--> B\n C < - - > D\n E -- > F\n G - - > H\n I -  -> J"),
      "```mermaid\ngraph LR\n A <--> B\n C <--> D\n E --> F\n G --> H\n I --> J\n```");
  // A bare -> needs whitespace on both sides and no '-' or '=' before that whitespace.
  EXPECT_EQ(ExtractMermaidStrict("A=->B\nC -> D\nE  ->  F\nG-> H"),
            "```mermaid\nA=->B\nC --> D\nE --> F\nG-> H\n```");
  // "= ->": the only whitespace before "->" follows '='.
  EXPECT_EQ(ExtractMermaidStrict("A = -> B\nC -\t-> D"), "```mermaid\nA = -> B\nC --> D\n```");
  EXPECT_EQ(ExtractMermaidStrict("A =  -> B"), "```mermaid\nA =  --> B\n```");
  // The trailing whitespace of a bare arrow may span lines.
  EXPECT_EQ(ExtractMermaidStrict("A ->\n  B"), "```mermaid\nA --> B\n```");
}

TEST(MermaidStrictTest, Nodes) {
  EXPECT_EQ(ExtractMermaidStrict("subgraph one[T]\n  A B[\"[1,2]\"] --> C[]\n  D[\"quoted\"] --> "
                                 "E[multi\nline \"q\"]\nend"),
            "```mermaid\nsubgraph one[T]\n  A B[\"[1,2]\"] --> C[]\n  D[\"quoted\"] --> "
            "E[\"multi<br>line &quot;q&quot;\"]\nend\n```");
  EXPECT_EQ(ExtractMermaidStrict("x[\"]"), "```mermaid\nx[\"\"]\n```");
  EXPECT_EQ(ExtractMermaidStrict("my node\t [t]"), "```mermaid\nmy_node[\"t\"]\n```");
  EXPECT_EQ(ExtractMermaidStrict("中文 节点[说明]"), "```mermaid\n中文_节点[\"说明\"]\n```");
  EXPECT_EQ(ExtractMermaidStrict("A[no close"), "```mermaid\nA[no close\n```");
}

// ---------------------------------------------------------------------------------------------
// Node-id legalisation.

TEST(MermaidLegalizeTest, Tv19) {
  EXPECT_EQ(LegalizeMermaidNodeIds(
                "graph TD\n  Sunlight --> |Holes (h+)| Top Layer\n  Top Layer --> Bottom Layer\n"),
            "graph TD\n  Sunlight -->|Holes h+| TopLayer[\"Top Layer\"]\n"
            "  TopLayer --> BottomLayer[\"Bottom Layer\"]\n");
}

TEST(MermaidLegalizeTest, Tv20StatementsDigitStartBidirectional) {
  EXPECT_EQ(LegalizeMermaidNodeIds("graph LR\n  A[Start] --> B; B --> 2nd step;\n  C <--> D\n"),
            "graph LR\n  A[Start] --> B; B --> n2ndStep[\"2nd step\"];\n  C <--> D\n");
}

TEST(MermaidLegalizeTest, Chains) {
  EXPECT_EQ(LegalizeMermaidNodeIds("graph TD\n  A --> b c --> d e\n"),
            "graph TD\n  A --> bC[\"b c\"] --> dE[\"d e\"]\n");
  EXPECT_EQ(LegalizeMermaidNodeIds("a b -->|x| c d -->|y| a b"),
            "  aB[\"a b\"] -->|x| cD[\"c d\"] -->|y| aB");
  // Arrows inside quotes or brackets do not split.
  EXPECT_EQ(LegalizeMermaidNodeIds("A[\"x --> y\"] --> B c"), "  A[\"x --> y\"] --> BC[\"B c\"]");
  // A line that ends a multi-line quoted label opens a quote as far as this line can tell, so
  // its arrow is not at top level and the line is only re-indented.
  EXPECT_EQ(LegalizeMermaidNodeIds("  A[\"first\nrest\"] --> B c"),
            "  A[\"first\n  rest\"] --> B c");
}

TEST(MermaidLegalizeTest, Collisions) {
  EXPECT_EQ(LegalizeMermaidNodeIds("a b --> x\naB[decl]\n  a-b --> y\n  a b --> z"),
            "  aB2[\"a b\"] --> x\naB[decl]\n  aB3[\"a-b\"] --> y\n  aB2 --> z");
  EXPECT_EQ(LegalizeMermaidNodeIds("a b --> c\na b --> c"), "  aB[\"a b\"] --> c\n  aB --> c");
  std::string many;
  std::string expected;
  for (int i = 0; i < 4; ++i) {
    many += "x" + std::string(i + 1, ' ') + "y --> z\n";
    expected += "  xY" + (i == 0 ? std::string() : std::to_string(i + 1)) + "[\"x" +
                std::string(i + 1, ' ') + "y\"] --> z\n";
  }
  EXPECT_EQ(LegalizeMermaidNodeIds(many), expected);
}

TEST(MermaidLegalizeTest, LabelsStatementsAndOddEndpoints) {
  EXPECT_EQ(LegalizeMermaidNodeIds("A[\"x; y\"] --> B c; C --> |l (1)  2| d  e;"),
            "  A[\"x; y\"] --> BC[\"B c\"]; C -->|l 1 2| dE[\"d  e\"];");
  EXPECT_EQ(LegalizeMermaidNodeIds("%% a b --> c d\n  p q --> r s"),
            "%% a b --> c d\n  pQ[\"p q\"] --> rS[\"r s\"]");
  EXPECT_EQ(LegalizeMermaidNodeIds("  --> b c\n  a b -->\n"),
            "   --> bC[\"b c\"]\n  aB[\"a b\"] --> \n");
  EXPECT_EQ(LegalizeMermaidNodeIds("A --> |only|"), "  A --> |only|");
  EXPECT_EQ(LegalizeMermaidNodeIds("graph TD\r\n  1 --> 2 x\r\n"),
            "graph TD\n  n1[\"1\"] --> n2X[\"2 x\"]\n");
  EXPECT_EQ(LegalizeMermaidNodeIds("x y --> 中文 节点"), "  xY[\"x y\"] --> node[\"中文 节点\"]");
  EXPECT_EQ(LegalizeMermaidNodeIds("_ _ --> ! !"), "  __[\"_ _\"] --> node[\"! !\"]");
  EXPECT_EQ(LegalizeMermaidNodeIds("no edges here\n"), "no edges here\n");
  EXPECT_EQ(LegalizeMermaidNodeIds(""), "");
}

// ---------------------------------------------------------------------------------------------
// Invalid edge lines and subgraph ids.

TEST(MermaidEdgeLinesTest, Tv21) {
  EXPECT_EQ(
      RemoveInvalidMermaidEdgeLines("graph TD\n  A -->|ok| B\n  G -->node(DRAM)| H\n  C --> D\n"),
      "graph TD\n  A -->|ok| B\n  C --> D\n");
}

TEST(MermaidEdgeLinesTest, OnlyUnmatchedSinglePipes) {
  EXPECT_EQ(RemoveInvalidMermaidEdgeLines("A -->|ok| B\nG -->node(DRAM)| H\nX --> \"a|b\" | Y\n"
                                          "P --> Q |\n%% R --> S| T\nU -->|a| |V\n"),
            "A -->|ok| B\nX --> \"a|b\" | Y\nP --> Q |\n%% R --> S| T\nU -->|a| |V\n");
  EXPECT_EQ(RemoveInvalidMermaidEdgeLines("A -- B | C"), "A -- B | C");
  EXPECT_EQ(RemoveInvalidMermaidEdgeLines("A --> B\\| C"), "A --> B\\| C");
  EXPECT_EQ(RemoveInvalidMermaidEdgeLines("A --> x| B"), "");
  EXPECT_EQ(RemoveInvalidMermaidEdgeLines("\n"), "\n");
}

TEST(MermaidSubgraphTest, Tv22) {
  EXPECT_EQ(FixMermaidSubgraphIds("graph LR\n  subgraph 1) Trigger\n    A\n  end\n  subgraph 1) "
                                  "Trigger\n  end\n  subgraph ok_id\n  end"),
            "graph LR\n  subgraph sg_1_Trigger[\"1) Trigger\"]\n    A\n  end\n  subgraph "
            "sg_1_Trigger_2[\"1) Trigger\"]\n  end\n  subgraph ok_id\n  end");
}

TEST(MermaidSubgraphTest, Rules) {
  EXPECT_EQ(
      FixMermaidSubgraphIds(
          "subgraph id[\"Title\"]\nsubgraph id2 (T)\nsubgraph My \"Big\" Group\nsubgraph 数据 "
          "层\nsubgraph ___\n\tsubgraph 2 x  \nsubgraph\nsubgraph   \nsubgraphs x\nsubgraph "
          "sg\nsubgraph ()\nsubgraph ()\n"),
      "subgraph id[\"Title\"]\nsubgraph id2 (T)\nsubgraph My \"Big\" Group\nsubgraph "
      "sg[\"数据 层\"]\nsubgraph ___\n\tsubgraph sg_2_x[\"2 x\"]\nsubgraph\nsubgraph   \n"
      "subgraphs x\nsubgraph sg\nsubgraph sg_2[\"()\"]\nsubgraph sg_3[\"()\"]\n");
  EXPECT_EQ(FixMermaidSubgraphIds("subgraph a b\nsubgraph a_b\nsubgraph a.b\nsubgraph a_b_2 x\n"),
            "subgraph a b\nsubgraph a_b\nsubgraph a_b_2[\"a.b\"]\nsubgraph a_b_2 x\n");
  EXPECT_EQ(FixMermaidSubgraphIds("subgraph say \"hi\"!\n"),
            "subgraph say \"hi\"!\n");  // first word is a valid id
  EXPECT_EQ(FixMermaidSubgraphIds("subgraph \"hi\" x\n"), "subgraph hi_x[\"\\\"hi\\\" x\"]\n");
}

// ---------------------------------------------------------------------------------------------
// Repetition detection.

TEST(MermaidRepetitionTest, Tv22SameEdge) {
  std::string code = "graph TD\n  A0 --> B\n  A1 --> B\n  A2 --> B\n";
  for (int i = 0; i < 8; ++i) code += "  X --> Y\n";
  EXPECT_EQ(DetectMermaidRepetition(code), (Issues{{"X-->Y", "same_edge_repetition", 8}}));
  // Seven are fine.
  code = "graph TD\n";
  for (int i = 0; i < 7; ++i) code += "  X --> Y\n";
  EXPECT_EQ(DetectMermaidRepetition(code), Issues{});
}

TEST(MermaidRepetitionTest, Tv22ConsecutiveLabelLines) {
  // Escaped newlines inside the label; the raw-text fallback sees the same eight lines.
  EXPECT_EQ(DetectMermaidRepetition("A[\"x\\nrep\\nrep\\nrep\\nrep\\nrep\\nrep\\nrep\\nrep\"]"),
            (Issues{{"A", "consecutive_line_repetition", 8},
                    {"GLOBAL", "raw_consecutive_line_repetition", 8}}));
  // Real newlines, and an edge on the last line, which the fallback skips as structure.
  EXPECT_EQ(DetectMermaidRepetition("A[\"x\nrep\nrep\nrep\nrep\nrep\nrep\nrep\nrep\"] --> B"),
            (Issues{{"A", "consecutive_line_repetition", 8}}));
  EXPECT_EQ(DetectMermaidRepetition("A[\"x<br>rep<BR/>rep<br />rep\\\\nrep\nrep\nrep\nrep\nrep\"]"
                                    " --> B"),
            (Issues{{"A", "consecutive_line_repetition", 8}}));
}

TEST(MermaidRepetitionTest, Tv22NoIssue) {
  EXPECT_EQ(DetectMermaidRepetition("graph TD\n  A[\"a\"] --> B[\"b\"]\n  B --> C"), Issues{});
  EXPECT_EQ(DetectMermaidRepetition(""), Issues{});
}

TEST(MermaidRepetitionTest, NodeIds) {
  const std::string long_id(130, 'A');
  EXPECT_EQ(DetectMermaidRepetition("  " + long_id + " --> B"),
            (Issues{{long_id.substr(0, 80), "oversized_node_id", 130},
                    {long_id.substr(0, 80), "node_id_token_repetition", 65}}));
  EXPECT_EQ(
      DetectMermaidRepetition("AnAoApAnAoApAnAoApAnAoApAnAoApAnAoApAnAoApAnAo --> B"),
      (Issues{{"AnAoApAnAoApAnAoApAnAoApAnAoApAnAoApAnAoApAnAo", "node_id_token_repetition", 8}}));
  // Without capital pairs, the two-letter windows of long letter runs count.
  EXPECT_EQ(DetectMermaidRepetition("ababababababababab --> C"),
            (Issues{{"ababababababababab", "node_id_token_repetition", 9}}));
  // A chain is fine when no endpoint repeats itself.
  EXPECT_EQ(DetectMermaidRepetition("A --> B --> AnAoAnAoAnAoAnAoAnAo"), Issues{});
  const std::string blob = Repeat("AnAo", 32);  // 8 times "AnAo"
  EXPECT_EQ(DetectMermaidRepetition("A --> B --> " + blob),
            (Issues{{blob, "node_id_token_repetition", 8}}));
}

TEST(MermaidRepetitionTest, LabelKinds) {
  std::string alternating = "A[\"";
  for (int i = 0; i < 20; ++i) alternating += i == 0 ? "a" : (i % 2 ? "\\nb" : "\\na");
  EXPECT_EQ(DetectMermaidRepetition(alternating + "\"]"), Issues{});
  std::string twenty = "A[\"";
  for (int i = 0; i < 40; ++i) twenty += i % 2 ? "\\nb" : "\\na";
  // The fallback reads the label's lines too ("A[\"a" is not "a", the last "b\"]" is "b").
  EXPECT_EQ(DetectMermaidRepetition(twenty + "\"]"),
            (Issues{{"A", "overall_line_repetition", 20},
                    {"GLOBAL", "raw_overall_line_repetition", 20}}));
  std::string cycle = "A[\"";
  for (int i = 0; i < 76; ++i) {
    cycle += (i > 0 ? "\\n" : "") + std::string("line number 0") + std::to_string(i % 4) +
             " of the cycle .....";
  }
  EXPECT_EQ(DetectMermaidRepetition(cycle + "\"]"),
            (Issues{{"A", "long_low_diversity_label", 76}}));
}

TEST(MermaidRepetitionTest, SameLabelEdges) {
  std::string same;
  for (int i = 0; i < 8; ++i) {
    same += "  N" + std::to_string(i) + " --> M" + std::to_string(i) + "[\"same\"]\n";
  }
  EXPECT_EQ(DetectMermaidRepetition(same),
            (Issues{{"EDGE_LABEL", "same_label_edge_repetition", 8},
                    {"EDGE_LABEL_CHAIN", "consecutive_same_label_edges", 8}}));
  std::string alternating;
  for (int i = 0; i < 16; ++i) {
    alternating += "  N" + std::to_string(i) + " --> M" + std::to_string(i) + "[\"" +
                   (i % 2 ? "same" : "other") + "\"]\n";
  }
  EXPECT_EQ(DetectMermaidRepetition(alternating),
            (Issues{{"EDGE_LABEL", "same_label_edge_repetition", 8},
                    {"EDGE_LABEL", "same_label_edge_repetition", 8}}));
}

TEST(MermaidRepetitionTest, RawTextFallback) {
  std::string free_text = "graph TD\n";
  for (int i = 0; i < 8; ++i) free_text += "  [free text]\n";
  EXPECT_EQ(DetectMermaidRepetition(free_text),
            (Issues{{"GLOBAL", "raw_consecutive_line_repetition", 8}}));
  std::string often;
  for (int i = 0; i < 20; ++i) often += "> free text.\nother\n";
  EXPECT_EQ(DetectMermaidRepetition(often),
            (Issues{{"GLOBAL", "raw_overall_line_repetition", 20}}));
  // Structure lines do not count.
  std::string structure;
  for (int i = 0; i < 10; ++i) structure += "subgraph s\nEND\n%% c\ndirection LR\n";
  EXPECT_EQ(DetectMermaidRepetition(structure), Issues{});
}

TEST(MermaidRepetitionTest, EdgeForms) {
  // X-->Y, X --->Y (source "X-") and a labelled edge with a shape all count as simple edges.
  std::string code;
  for (int i = 0; i < 8; ++i) code += i % 2 ? "X-->Y\n" : "  X -->|a| Y[\"q\"]\n";
  EXPECT_EQ(DetectMermaidRepetition(code), (Issues{{"X-->Y", "same_edge_repetition", 8}}));
  code.clear();
  for (int i = 0; i < 8; ++i) code += "X--->Y {d}\n";
  EXPECT_EQ(DetectMermaidRepetition(code), (Issues{{"X--->Y", "same_edge_repetition", 8}}));
}

// ---------------------------------------------------------------------------------------------
// The flowchart chain and hostile input.

TEST(MermaidNormalizeFlowchartTest, RepetitionEmptiesOtherwiseFixes) {
  std::string code = "graph TD\n";
  for (int i = 0; i < 8; ++i) code += "  X --> Y\n";
  EXPECT_EQ(NormalizeFlowchart(code), "");
  EXPECT_EQ(NormalizeFlowchart(""), "");
  EXPECT_EQ(NormalizeFlowchart("graph TD\n  a b --> c\n  G -->node(DRAM)| H\n  subgraph 1 x\n  "
                               "end\n"),
            "```mermaid\ngraph TD\n  aB[\"a b\"] --> c\n  subgraph sg_1_x[\"1 x\"]\n  end\n```");
}

TEST(MermaidHostileInputTest, LinearTime) {
  // Tests never assert on time: a scan quadratic in its input would not finish these inputs
  // within the test timeout.
  const size_t kMiB = size_t{1} << 20;
  std::string endpoints;
  for (int i = 0; endpoints.size() < kMiB; ++i) {
    endpoints += "a b --> a  b" + std::string(i % 7, ' ') + "c\n";
  }
  const std::vector<std::string> inputs = {
      Repeat("a", kMiB),   Repeat("A[", kMiB),         Repeat("A[\"", kMiB),
      Repeat("- ", kMiB),  Repeat(" ", kMiB),          "<" + Repeat(" ", kMiB),
      Repeat("\\", kMiB),  Repeat("x -->", kMiB),      Repeat("subgraph 1\n", kMiB),
      Repeat("```", kMiB), Repeat("A B ", kMiB),       "A[\"" + Repeat("rep\\n", kMiB) + "\"]",
      Repeat("\"", kMiB),  Repeat("|", kMiB),          Repeat("<br ", kMiB),
      Repeat("中", kMiB),  Repeat(" \t", kMiB) + "->", Repeat("= ", kMiB),
      Repeat("\n", kMiB),  Repeat("A -->|", kMiB),     Repeat("-->|x", kMiB),
      endpoints,
  };
  for (const std::string& in : inputs) {
    const Issues issues = DetectMermaidRepetition(in);
    const std::string legal = LegalizeMermaidNodeIds(in);
    const std::string edges = RemoveInvalidMermaidEdgeLines(in);
    const std::string subgraphs = FixMermaidSubgraphIds(in);
    const std::string strict = ExtractMermaidStrict(in);
    const std::string flowchart = NormalizeFlowchart(in);
    EXPECT_LE(edges.size(), in.size());
    EXPECT_LE(strict.size(), 8 * in.size() + 16);
  }
}

TEST(MermaidHostileInputTest, InvalidUtf8IsCopiedThrough) {
  EXPECT_EQ(ExtractMermaidStrict("A[\xff] --> \xc3"), "```mermaid\nA[\"\xff\"] --> \xc3\n```");
  EXPECT_EQ(LegalizeMermaidNodeIds("a\xff b --> c"), "  aB[\"a\xff b\"] --> c");
  EXPECT_EQ(DetectMermaidRepetition("\xff\xfe[\"\xc3\"]"), Issues{});
}

}  // namespace
}  // namespace mineru::pipeline
