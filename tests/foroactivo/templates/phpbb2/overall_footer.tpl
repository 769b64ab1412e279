<!-- follows Etana/template@3ca46e4257dea5e96ac85ce43f1c005d1c1b04fe src/subsilver/overall_footer_end.tpl (trimmed) -->
</div>
</td></tr></table>
<a name="bottom"></a>
</body>
</html>
