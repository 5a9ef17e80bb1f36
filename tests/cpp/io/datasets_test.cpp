// Every dataset of the shared data folder loads with the counts verified in its README
// ("Size and labels (verified)"). The folder is RATEOPT_SHARED_DATA_DIR, or $RATEOPT_DATA_DIR when
// set; when it is missing the tests are skipped unless RATEOPT_REQUIRE_DATA=1.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "rateopt/error.hpp"
#include "rateopt/io.hpp"
#include "test_util.hpp"

namespace rateopt {
namespace {

class Datasets : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::data_dir();
    if (std::filesystem::is_directory(dir_)) return;
    const char* require = std::getenv("RATEOPT_REQUIRE_DATA");
    if (require != nullptr && std::string(require) == "1") {
      FAIL() << "data folder '" << dir_ << "' is missing and RATEOPT_REQUIRE_DATA=1";
    }
    GTEST_SKIP() << "data folder '" << dir_ << "' is missing";
  }
  [[nodiscard]] std::string path(const std::string& rel) const { return dir_ + "/" + rel; }

  std::string dir_;
};

std::size_t positives(const Labels& y) {
  return static_cast<std::size_t>(std::count(y.values.begin(), y.values.end(), 1));
}

std::size_t count_level(const Column& c, const std::string& level) {
  const std::int32_t code = c.find_level(level);
  if (code < 0) return 0;
  return static_cast<std::size_t>(std::count(c.codes.begin(), c.codes.end(), code));
}

std::size_t count_missing(const Column& c) {
  return static_cast<std::size_t>(std::count(c.codes.begin(), c.codes.end(), -1));
}

// Column names of UCI Adult: the "name: ..." lines of adult.names, then the label.
std::vector<std::string> adult_names(const std::string& names_path) {
  std::ifstream in(names_path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '|') continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) out.push_back(line.substr(0, colon));
  }
  out.emplace_back("income");
  return out;
}

TEST_F(Datasets, AdultRawCsv) {
  CsvOptions o;
  o.has_header = false;
  o.column_names = adult_names(path("adult/adult.names"));
  ASSERT_EQ(o.column_names.size(), 15u);
  o.label_column = "income";
  o.positive_values = {">50K", ">50K."};
  o.group_columns = {"sex", "race"};
  o.missing = MissingPolicy::kZero;

  ReadStats stats;
  const Dataset train = read_csv(path("adult/adult.data.gz"), o, nullptr, &stats);
  ASSERT_EQ(train.num_rows(), 32561u);
  EXPECT_EQ(positives(train.labels()), 7841u);
  EXPECT_EQ(train.num_rows() - positives(train.labels()), 24720u);
  EXPECT_EQ(count_level(train.column("sex"), "Male"), 21790u);
  EXPECT_EQ(count_level(train.column("sex"), "Female"), 10771u);
  const Column& race = train.column("race");
  EXPECT_EQ(count_level(race, "White"), 27816u);
  EXPECT_EQ(count_level(race, "Black"), 3124u);
  EXPECT_EQ(count_level(race, "Asian-Pac-Islander"), 1039u);
  EXPECT_EQ(count_level(race, "Amer-Indian-Eskimo"), 311u);
  EXPECT_EQ(count_level(race, "Other"), 271u);
  EXPECT_EQ(stats.rows_dropped_missing, 0u);
  // 6 numeric + one-hot workclass 8, education 16, marital 7, occupation 14, relationship 6,
  // native-country 41 ('?' is missing, not a level; sex and race are groups).
  EXPECT_EQ(train.num_features(), 98u);
  EXPECT_EQ(train.encoding().feature_names[1], "workclass=State-gov");

  CsvOptions t = o;
  t.skip_lines = 1;  // the "|1x3 Cross validator" banner
  const Dataset test = read_csv(path("adult/adult.test.gz"), t, &train.encoding(), &stats);
  ASSERT_EQ(test.num_rows(), 16281u);
  EXPECT_EQ(positives(test.labels()), 3846u);
  EXPECT_EQ(count_level(test.column("sex"), "Male"), 10860u);
  EXPECT_EQ(count_level(test.column("sex"), "Female"), 5421u);
  EXPECT_EQ(test.num_features(), train.num_features());

  // Rows with '?' dropped (the default policy).
  o.missing = MissingPolicy::kDrop;
  const Dataset complete = read_csv(path("adult/adult.data.gz"), o, nullptr, &stats);
  EXPECT_EQ(complete.num_rows(), 30162u);
  EXPECT_EQ(stats.rows_dropped_missing, 2399u);
  t.missing = MissingPolicy::kDrop;
  const Dataset complete_test = read_csv(path("adult/adult.test.gz"), t, nullptr, &stats);
  EXPECT_EQ(complete_test.num_rows(), 15060u);
  EXPECT_EQ(stats.rows_dropped_missing, 1221u);
}

TEST_F(Datasets, AdultA9a) {
  LibsvmOptions o;
  o.num_features = 123;
  const Dataset train = read_libsvm(path("adult/a9a.gz"), o);
  ASSERT_EQ(train.num_rows(), 32561u);
  EXPECT_EQ(train.num_features(), 123u);
  EXPECT_EQ(train.features().nnz(), 451592u);
  EXPECT_EQ(train.labels().names, (std::vector<std::string>{"-1", "+1"}));
  EXPECT_EQ(positives(train.labels()), 7841u);

  const Dataset test = read_libsvm(path("adult/a9a.t"), o);
  ASSERT_EQ(test.num_rows(), 16281u);
  EXPECT_EQ(test.num_features(), 123u);
  EXPECT_EQ(test.features().nnz(), 225731u);
  EXPECT_EQ(positives(test.labels()), 3846u);
  EXPECT_EQ(read_libsvm(path("adult/a9a.t")).num_features(), 122u);  // max index 122
}

TEST_F(Datasets, BreastCancerWisconsin) {
  CsvOptions o;
  o.has_header = false;
  o.column_names = {"id",     "clump",     "size",     "shape",   "adhesion", "epithelial",
                    "nuclei", "chromatin", "nucleoli", "mitoses", "class"};
  o.label_column = "class";
  o.positive_values = {"4"};
  o.ignore_columns = {"id"};
  o.missing = MissingPolicy::kZero;
  const Dataset all = read_csv(path("breast-cancer-wisconsin/breast-cancer-wisconsin.data"), o);
  ASSERT_EQ(all.num_rows(), 699u);
  EXPECT_EQ(positives(all.labels()), 241u);
  EXPECT_EQ(all.num_features(), 9u);
  EXPECT_EQ(count_missing(all.column("nuclei")), 16u);

  o.missing = MissingPolicy::kDrop;
  ReadStats stats;
  const Dataset complete =
      read_csv(path("breast-cancer-wisconsin/breast-cancer-wisconsin.data"), o, nullptr, &stats);
  EXPECT_EQ(complete.num_rows(), 683u);
  EXPECT_EQ(positives(complete.labels()), 239u);
  EXPECT_EQ(stats.rows_dropped_missing, 16u);

  CsvOptions w;
  w.has_header = false;
  w.skip_lines = 1;  // "569,30,malignant,benign"
  for (int j = 1; j <= 30; ++j) w.column_names.push_back(fmt::format("x{}", j));
  w.column_names.emplace_back("target");
  w.label_column = "target";
  const Dataset wdbc = read_csv(path("breast-cancer-wisconsin/wdbc_sklearn_breast_cancer.csv"), w);
  ASSERT_EQ(wdbc.num_rows(), 569u);
  EXPECT_EQ(wdbc.num_features(), 30u);
  EXPECT_EQ(wdbc.labels().names, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(positives(wdbc.labels()), 357u);  // 1 = benign
}

TEST_F(Datasets, CommunitiesCrime) {
  CsvOptions o;
  o.has_header = false;
  std::ifstream names(path("communities-crime/communities.names"));
  std::string line;
  while (std::getline(names, line)) {
    if (line.rfind("@attribute ", 0) != 0) continue;
    std::istringstream ss(line.substr(11));
    std::string name;
    ss >> name;
    o.column_names.push_back(name);
  }
  ASSERT_EQ(o.column_names.size(), 128u);
  o.ignore_columns = {"communityname"};
  o.group_columns = {"state", "fold"};
  o.missing = MissingPolicy::kZero;
  const Dataset ds = read_csv(path("communities-crime/communities.data"), o);
  ASSERT_EQ(ds.num_rows(), 1994u);
  EXPECT_EQ(ds.columns().size(), 127u);
  EXPECT_EQ(ds.num_features(), 125u);
  const Column& crime = ds.column("ViolentCrimesPerPop");
  ASSERT_TRUE(crime.is_numeric());
  EXPECT_EQ(
      std::count_if(crime.numeric.begin(), crime.numeric.end(), [](double v) { return v > 0.28; }),
      583);
  std::vector<double> black = ds.column("racepctblack").numeric;
  std::nth_element(black.begin(), black.begin() + 997, black.end());
  EXPECT_DOUBLE_EQ(black[997], 0.06);  // the median (997th and 998th values agree)
}

TEST_F(Datasets, Compas) {
  CsvOptions o;
  o.label_column = "two_year_recid";
  o.group_columns = {"sex", "race"};
  o.missing = MissingPolicy::kZero;
  const Dataset ds = read_csv(path("compas/compas-scores-two-years.csv.gz"), o);
  ASSERT_EQ(ds.num_rows(), 7214u);
  EXPECT_EQ(ds.columns().size(), 53u);
  EXPECT_EQ(positives(ds.labels()), 3251u);
  EXPECT_EQ(count_level(ds.column("sex"), "Male"), 5819u);
  EXPECT_EQ(count_level(ds.column("sex"), "Female"), 1395u);
  const Column& race = ds.column("race");
  EXPECT_EQ(count_level(race, "African-American"), 3696u);
  EXPECT_EQ(count_level(race, "Caucasian"), 2454u);
  EXPECT_EQ(count_level(race, "Hispanic"), 637u);
  EXPECT_EQ(count_level(race, "Other"), 377u);
  EXPECT_EQ(count_level(race, "Asian"), 32u);
  EXPECT_EQ(count_level(race, "Native American"), 18u);
  // The header repeats decile_score and priors_count: the repeats get a ".1" suffix.
  EXPECT_NE(ds.find_column("decile_score.1"), nullptr);
  EXPECT_NE(ds.find_column("priors_count.1"), nullptr);

  const Dataset violent = read_csv(path("compas/compas-scores-two-years-violent.csv"), o);
  ASSERT_EQ(violent.num_rows(), 4743u);
  EXPECT_EQ(positives(violent.labels()), 775u);
  EXPECT_EQ(count_level(violent.column("sex"), "Male"), 3746u);
  EXPECT_EQ(count_level(violent.column("sex"), "Female"), 997u);
}

TEST_F(Datasets, LawSchool) {
  CsvOptions o;
  o.label_column = "pass_bar";
  o.group_columns = {"race1", "gender"};
  o.missing = MissingPolicy::kZero;
  const Dataset bar = read_csv(path("law-school/bar_pass_prediction.csv.gz"), o);
  ASSERT_EQ(bar.num_rows(), 22407u);
  EXPECT_EQ(positives(bar.labels()), 21238u);
  const Column& race1 = bar.column("race1");
  EXPECT_EQ(count_level(race1, "white"), 18716u);
  EXPECT_EQ(count_level(race1, "black"), 1343u);
  EXPECT_EQ(count_level(race1, "hisp"), 1027u);
  EXPECT_EQ(count_level(race1, "asian"), 897u);
  EXPECT_EQ(count_level(race1, "other"), 408u);
  EXPECT_EQ(count_missing(race1), 16u);
  EXPECT_EQ(count_level(bar.column("gender"), "male"), 12576u);
  EXPECT_EQ(count_level(bar.column("gender"), "female"), 9826u);
  EXPECT_EQ(count_missing(bar.column("gender")), 5u);

  CsvOptions l;
  l.label_column = "first_pf";
  l.group_columns = {"race", "sex"};
  const Dataset law = read_csv(path("law-school/law_data.csv"), l);
  ASSERT_EQ(law.num_rows(), 21791u);
  EXPECT_EQ(positives(law.labels()), 19360u);
  EXPECT_EQ(count_level(law.column("race"), "White"), 18285u);
  EXPECT_EQ(count_level(law.column("race"), "Black"), 1282u);
  EXPECT_EQ(count_level(law.column("sex"), "2"), 12254u);
  EXPECT_EQ(count_level(law.column("sex"), "1"), 9537u);
  EXPECT_NE(law.find_column("col1"), nullptr);  // the unnamed row index
}

TEST_F(Datasets, Letter) {
  CsvOptions o;
  o.has_header = false;
  o.column_names = {"letter"};
  for (int j = 1; j <= 16; ++j) o.column_names.push_back(fmt::format("x{}", j));
  o.label_column = "letter";
  const Dataset ds = read_csv(path("letter/letter-recognition.data"), o);
  ASSERT_EQ(ds.num_rows(), 20000u);
  EXPECT_EQ(ds.num_features(), 16u);
  const Labels& y = ds.labels();
  ASSERT_EQ(y.kind, LabelKind::kMulticlass);
  ASSERT_EQ(y.names.size(), 26u);
  EXPECT_EQ(y.names.front(), "A");
  EXPECT_EQ(y.names.back(), "Z");
  EXPECT_EQ(std::count(y.values.begin(), y.values.end(), 0), 789);   // A
  EXPECT_EQ(std::count(y.values.begin(), y.values.end(), 20), 813);  // U
  EXPECT_EQ(std::count(y.values.begin(), y.values.end(), 25), 734);  // Z
}

TEST_F(Datasets, Spambase) {
  CsvOptions o;
  o.has_header = false;
  for (int j = 1; j <= 57; ++j) o.column_names.push_back(fmt::format("c{}", j));
  o.column_names.emplace_back("spam");
  o.label_column = "spam";
  const Dataset ds = read_csv(path("spambase/spambase.data"), o);
  ASSERT_EQ(ds.num_rows(), 4601u);
  EXPECT_EQ(ds.num_features(), 57u);
  EXPECT_EQ(positives(ds.labels()), 1813u);
}

TEST_F(Datasets, W8a) {
  const Dataset ds = read_dataset(path("w8a/w8a.gz"));
  ASSERT_EQ(ds.num_rows(), 49749u);
  EXPECT_EQ(ds.num_features(), 300u);
  EXPECT_EQ(ds.features().nnz(), 579586u);
  EXPECT_EQ(positives(ds.labels()), 1479u);
}

TEST_F(Datasets, ReutersMoneyFx) {
  LibsvmOptions o;
  o.num_features = 8315;
  const Dataset train = read_libsvm(path("reuters-money-fx/reuters.trn.gz"), o);
  ASSERT_EQ(train.num_rows(), 7770u);
  EXPECT_EQ(train.features().nnz(), 339837u);
  EXPECT_EQ(positives(train.labels()), 538u);
  const Dataset test = read_libsvm(path("reuters-money-fx/reuters.tst.gz"), o);
  ASSERT_EQ(test.num_rows(), 3299u);
  EXPECT_EQ(test.features().nnz(), 136821u);
  EXPECT_EQ(positives(test.labels()), 179u);
}

// ---- MULAN multi-label sets ------------------------------------------------------------------

struct MulanCase {
  std::string file;  // relative to the data folder
  std::size_t n;
  std::size_t n_labels;
  std::size_t n_features;  // encoded features (see docs/data-formats.md)
  double cardinality;      // README value, 3 decimals
  std::size_t min_label_count;
  std::size_t max_label_count;
  std::size_t distinct;  // distinct label sets
};

void check_mulan(const std::string& dir, const MulanCase& c) {
  SCOPED_TRACE(c.file);
  const Dataset ds = read_dataset(dir + "/" + c.file);  // the sibling XML names the labels
  const Labels& y = ds.labels();
  ASSERT_EQ(y.kind, LabelKind::kMultilabel);
  ASSERT_EQ(ds.num_rows(), c.n);
  ASSERT_EQ(y.size(), c.n);
  EXPECT_EQ(y.names.size(), c.n_labels);
  EXPECT_EQ(ds.num_features(), c.n_features);
  const double card = static_cast<double>(y.set_indices.size()) / static_cast<double>(c.n);
  EXPECT_NEAR(card, c.cardinality, 0.0005);
  std::vector<std::size_t> counts(y.names.size(), 0);
  for (auto k : y.set_indices) ++counts[static_cast<std::size_t>(k)];
  EXPECT_EQ(*std::min_element(counts.begin(), counts.end()), c.min_label_count);
  EXPECT_EQ(*std::max_element(counts.begin(), counts.end()), c.max_label_count);
  std::set<std::vector<std::int32_t>> sets;
  for (std::size_t i = 0; i < c.n; ++i) {
    const auto s = y.label_set(i);
    sets.emplace(s.begin(), s.end());
  }
  EXPECT_EQ(sets.size(), c.distinct);
}

TEST_F(Datasets, MulanSmall) {
  const std::vector<MulanCase> cases = {
      {"birds/birds-train.arff", 322, 19, 271, 1.059, 4, 64, 89},
      {"birds/birds-test.arff", 323, 19, 271, 0.969, 2, 46, 84},
      {"cal500/cal500.arff", 502, 174, 68, 26.044, 5, 444, 502},
      {"emotions/emotions-train.arff", 391, 6, 72, 1.813, 89, 168, 26},
      {"emotions/emotions-test.arff", 202, 6, 72, 1.975, 54, 96, 21},
      {"enron/enron-train.arff", 1123, 53, 1001, 3.386, 0, 600, 545},
      {"enron/enron-test.arff", 579, 53, 1001, 3.363, 1, 313, 317},
      {"genbase/genbase-train.arff", 463, 27, 1185, 1.261, 0, 117, 29},
      {"genbase/genbase-test.arff", 199, 27, 1185, 1.231, 0, 54, 21},
      {"medical/medical-train.arff", 333, 45, 1449, 1.255, 0, 98, 61},
      {"medical/medical-test.arff", 645, 45, 1449, 1.24, 0, 168, 73},
      {"scene/scene-train.arff.gz", 1211, 6, 294, 1.062, 165, 277, 14},
      {"scene/scene-test.arff.gz", 1196, 6, 294, 1.086, 199, 256, 13},
      {"yeast/yeast-train.arff", 1500, 14, 103, 4.228, 21, 1128, 164},
      {"yeast/yeast-test.arff", 917, 14, 103, 4.252, 13, 688, 140},
  };
  for (const auto& c : cases) check_mulan(dir_, c);
}

TEST_F(Datasets, MulanLarge) {
  const std::vector<MulanCase> cases = {
      {"bibtex/bibtex-train.arff.gz", 4880, 159, 1836, 2.38, 28, 691, 2058},
      {"bibtex/bibtex-test.arff", 2515, 159, 1836, 2.444, 11, 351, 1257},
      {"corel5k/Corel5k-train-sparse.arff", 4500, 374, 499, 3.522, 0, 1004, 2925},
      {"corel5k/Corel5k-test-sparse.arff", 500, 374, 499, 3.526, 0, 116, 434},
      {"delicious/delicious-train.arff.gz", 12920, 983, 500, 19.047, 18, 5197, 12714},
      {"delicious/delicious-test.arff", 3185, 983, 500, 18.91, 0, 1298, 3163},
      {"tmc2007-500/tmc2007-500-train.arff.gz", 21519, 22, 500, 2.226, 304, 12876, 1172},
      {"tmc2007-500/tmc2007-500-test.arff", 7077, 22, 500, 1.952, 137, 3297, 614},
  };
  for (const auto& c : cases) check_mulan(dir_, c);
}

TEST_F(Datasets, MulanLabelOrderFollowsXml) {
  // yeast.xml lists ... Class3, Class6, Class4 ...; the file declares Class1..Class14.
  const Dataset yeast = read_dataset(path("yeast/yeast-train.arff"));
  const auto& names = yeast.labels().names;
  ASSERT_EQ(names.size(), 14u);
  EXPECT_EQ(names[2], "Class3");
  EXPECT_EQ(names[3], "Class6");
  EXPECT_EQ(names[4], "Class4");
  EXPECT_EQ(names, read_mulan_labels(path("yeast/yeast.xml")));
  // genbase: the accession-ID attribute 'protein' is an identifier column, not a feature.
  const Dataset genbase = read_dataset(path("genbase/genbase-train.arff"));
  EXPECT_EQ(genbase.encoding().excluded_columns, (std::vector<std::string>{"protein"}));
  EXPECT_EQ(genbase.column("protein").levels.size(), 463u);
  // birds: the label with an escaped quote in the ARFF matches the XML name.
  const Dataset birds = read_dataset(path("birds/birds-train.arff"));
  EXPECT_NE(
      std::find(birds.labels().names.begin(), birds.labels().names.end(), "Swainson's Thrush"),
      birds.labels().names.end());
}

}  // namespace
}  // namespace rateopt
