/** The vocabularies of the generated corpus (corpus.mjs), shared with the history bench for its queries. */
export const EN = (
  "the a to of and in is it that for on with as this we be by are or not can if when then from so but should " +
  "function variable module server client request response database query index cache token session error retry " +
  "timeout deploy build test refactor migrate schema table column config file path directory branch commit merge " +
  "review bug fix patch release version dependency package install upgrade memory latency throughput benchmark " +
  "thread worker queue lock mutex socket stream buffer parser compiler runtime container kubernetes docker cluster " +
  "authentication authorization password secret certificate encryption logging metrics tracing alert dashboard " +
  "pagination cursor offset limit filter search ranking snippet tokenizer trigram unicode encoding newline " +
  "frontend backend component render state props hook effect router layout style theme accessibility"
).split(" ");
export const EN_PHRASES = [
  "connection pool",
  "race condition",
  "memory leak",
  "unit tests",
  "pull request",
  "rate limit",
  "feature flag",
  "dead code",
  "hot path",
  "cold start",
];
export const JA = (
  "データベース 設定ファイル 認証 テスト 移行 キャッシュ 検索 索引 東京 天気 予報 エラー 再試行 接続 性能 改善 " +
  "修正 確認 実装 関数 変数 変更 削除 追加 画面 表示 ユーザー サーバー 応答 時間 日本語 文字列 処理 並列 失敗 成功"
).split(" ");
export const JA_GLUE = [
  "を",
  "が",
  "は",
  "の",
  "に",
  "で",
  "と",
  "から",
  "まで",
  "します。",
  "しました。",
  "ですね。",
  "してください。",
];
export const ZH = (
  "数据库 配置文件 认证 测试 迁移 缓存 搜索 索引 北京 天气 预报 错误 重试 连接 性能 优化 修复 确认 实现 函数 " +
  "变量 修改 删除 添加 页面 显示 用户 服务器 响应 时间 中文 字符串 处理 并行 失败 成功"
).split(" ");
export const ZH_GLUE = ["的", "了", "在", "和", "把", "被", "是", "我们", "需要", "。", "，", "吗？"];
