// SPDX-License-Identifier: Apache-2.0
#include "pipeline/code_language.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "pipeline/equation_fixes.h"

namespace mineru::pipeline {

// ---------------------------------------------------------------------------------------------
// Code language guess (deviation: MinerU asks magika, a learned classifier we do not ship).

namespace {

// Per language: its label (a leading '*' = match case-insensitively), then signatures
// "<weight digit><where><text>" with where '~' = anywhere, '^' = at the start of a line (after
// indentation), '=' = a whole line. Each signature counts once, however often it occurs; earlier
// languages win ties.
const std::vector<std::vector<std::string_view>>& Languages() {
  static const auto* const kLanguages = new std::vector<std::vector<std::string_view>>{
      {"*html", "5~<!doctype html", "4~<html", "3~<body", "3~<head", "3~</div>", "2~<div", "2~</p>",
       "2~</span>", "2~</a>"},
      {"latex", "5~\\documentclass", "4~\\usepackage", "3~\\begin{", "2~\\end{", "3~\\section{",
       "2~\\item "},
      {"php", "6~<?php", "4~$this->", "2~echo $", "1~?>"},
      {"python", "3^def ", "3^elif ", "3^except", "2^import ", "1^from ", "1~ import ", "2~self.",
       "3~__init__", "1~print(", "1~None"},
      {"java", "4~public class ", "5~public static void main", "5~System.out.print",
       "5~import java.", "3~@Override", "3~String[]", "1~private "},
      {"cpp", "2^#include", "5~#include <iostream>", "4~std::", "4~cout <<", "3~template <",
       "3~template<", "3~nullptr", "2~namespace ", "2~public:", "2~private:"},
      {"c", "2^#include", "5~#include <stdio.h>", "3~printf(", "3~malloc(", "3~scanf(",
       "2~int main(", "2^#define ", "1~struct "},
      {"javascript", "4~console.log(", "4~module.exports", "3~require(", "3~document.",
       "3~===", "2~=>", "1~function ", "1~const ", "1~let ", "1~var "},
      {"go", "4^package ", "3^func ", "4~fmt.", "3~import (", "2~:="},
      {"rust", "3^fn ", "3~pub fn ", "4~let mut ", "5~println!", "4~use std::", "2^impl ",
       "2~&mut "},
      {"ruby", "3^puts ", "5~.each do |", "5~attr_accessor", "2~require '", "1=end"},
      {"shell", "6~#!/bin/bash", "6~#!/bin/sh", "6~#!/usr/bin/env bash", "3^$ ", "4^sudo ",
       "4~apt-get ", "4~pip install", "3^export ", "2^echo ", "2^cd ", "2=fi", "2=done",
       "3~| grep"},
      {"*sql", "2~select ", "1~ from ", "4~insert into ", "4~create table ", "4~delete from ",
       "1~update ", "1~ set ", "1~ where ", "2~group by", "1~order by"},
  };
  return *kLanguages;
}

// Minimum score for a guess; below it the text is "txt".
constexpr int kMinLanguageScore = 3;

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view TrimIndent(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
    line.remove_suffix(1);
  }
  return line;
}

// The weight of `sig` when `text` (split into indent-trimmed `lines`) shows it, else 0.
int SignatureScore(std::string_view text, const std::vector<std::string_view>& lines,
                   std::string_view sig) {
  const int weight = sig[0] - '0';
  const char where = sig[1];
  const std::string_view needle = sig.substr(2);
  bool found = false;
  if (where == '~') {
    found = text.find(needle) != std::string_view::npos;
  } else {
    found = std::any_of(lines.begin(), lines.end(), [&](std::string_view l) {
      return where == '^' ? l.starts_with(needle) : l == needle;
    });
  }
  return found ? weight : 0;
}

std::vector<std::string_view> IndentTrimmedLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(TrimIndent(text.substr(start, end - start)));
    start = end + 1;
  }
  return lines;
}

// JSON: an object or array whose body has "key": pairs.
bool LooksLikeJson(std::string_view trimmed) {
  if (trimmed.size() < 2) return false;
  const char first = trimmed.front();
  const char last = trimmed.back();
  return ((first == '{' && last == '}') || (first == '[' && last == ']')) &&
         trimmed.find("\":") != std::string_view::npos;
}

// Python block headers: a line opening with a keyword and ending with ':'.
bool HasPythonHeader(const std::vector<std::string_view>& lines) {
  static constexpr std::array<std::string_view, 9> kHeads = {
      "if ", "for ", "while ", "def ", "class ", "else:", "try:", "with ", "elif "};
  return std::any_of(lines.begin(), lines.end(), [](std::string_view l) {
    if (!l.ends_with(':')) return false;
    return std::any_of(kHeads.begin(), kHeads.end(),
                       [&](std::string_view h) { return l.starts_with(h); });
  });
}

}  // namespace

std::string GuessCodeLanguage(std::string_view code) {
  const std::string_view trimmed = PythonStrip(code);
  if (trimmed.empty()) return "txt";
  if (LooksLikeJson(trimmed)) return "json";
  const std::string lower = LowerAscii(trimmed);
  const std::vector<std::string_view> lines = IndentTrimmedLines(trimmed);
  const std::vector<std::string_view> lower_lines = IndentTrimmedLines(lower);
  std::string_view best = "txt";
  int best_score = kMinLanguageScore - 1;
  for (const std::vector<std::string_view>& lang : Languages()) {
    const bool ignore_case = lang[0].starts_with('*');
    const std::string_view label = lang[0].substr(ignore_case ? 1 : 0);
    int score = 0;
    for (size_t i = 1; i < lang.size(); ++i) {
      score += ignore_case ? SignatureScore(lower, lower_lines, lang[i])
                           : SignatureScore(trimmed, lines, lang[i]);
    }
    if (label == "python" && HasPythonHeader(lines)) score += 2;
    if (score > best_score) {
      best_score = score;
      best = label;
    }
  }
  return std::string(best);
}

}  // namespace mineru::pipeline
